"""Transposition table: packing round-trips, replacement, bounded size."""
from __future__ import annotations

import chess
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from search import alphabeta
from search.alphabeta import AlphaBeta
from search.features import Features
from search.position import Position
from search.tt import TranspositionTable, decode, decode_move, encode_move, score_from_tt
from search.types import EXACT, INFINITY, LOWER, MATE, UPPER

moves = st.builds(
    chess.Move,
    st.integers(0, 63),
    st.integers(0, 63),
    st.sampled_from([None, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN]),
).filter(lambda m: m.from_square != m.to_square)


def entry(table: TranspositionTable, key: int) -> tuple[int, int, int, chess.Move | None] | None:
    """(depth, bound, node-relative score, move) stored for `key`, or None."""
    data = table.probe_data(key)
    if not data:
        return None
    depth, bound, score, code = decode(data)
    return depth, bound, score, decode_move(code)


@given(
    key=st.integers(0, 2**64 - 1),
    depth=st.integers(1, 120),
    bound=st.sampled_from([EXACT, LOWER, UPPER]),
    score=st.one_of(st.integers(-3000, 3000), st.integers(MATE - 200, MATE), st.integers(-MATE, -MATE + 200)),
    move=st.one_of(st.none(), moves),
    ply=st.integers(0, 99),
)
def test_store_then_probe_round_trips(key, depth, bound, score, move, ply) -> None:
    table = TranspositionTable(1)
    table.store(key, depth, bound, score, move, ply)
    stored = entry(table, key)
    assert stored is not None
    assert (stored[0], stored[1], score_from_tt(stored[2], ply), stored[3]) == (depth, bound, score, move)
    assert entry(table, key ^ (1 << 63)) is None  # same slot, other key


@given(move=moves)
def test_move_codes_round_trip(move) -> None:
    assert decode_move(encode_move(move)) == move
    assert encode_move(move) != 0


def test_mate_scores_are_stored_relative_to_the_node() -> None:
    table = TranspositionTable(1)
    table.store(42, 5, EXACT, MATE - 7, None, ply=4)  # mate in 3 plies from this node
    assert score_from_tt(entry(table, 42)[2], ply=2) == MATE - 5


def test_upper_bound_keeps_the_known_move() -> None:
    table = TranspositionTable(1)
    move = chess.Move.from_uci("e2e4")
    table.store(7, 3, LOWER, 50, move, 0)
    table.store(7, 4, UPPER, -20, None, 0)
    assert entry(table, 7)[3] == move and entry(table, 7)[1] == UPPER


def test_deeper_entry_of_this_search_survives_a_colliding_shallow_one() -> None:
    table = TranspositionTable(1)
    size = table.mask + 1
    table.store(5, 9, EXACT, 1, None, 0)
    table.store(5 + size, 2, EXACT, 2, None, 0)  # same slot
    assert entry(table, 5) is not None and entry(table, 5 + size) is None
    table.new_search()  # old entries give way in a new search
    table.store(5 + size, 2, EXACT, 2, None, 0)
    assert entry(table, 5 + size) is not None


@pytest.mark.parametrize("megabytes", [1, 16, 64, 256])
def test_slot_count_fits_the_hash_setting(megabytes: int) -> None:
    table = TranspositionTable(megabytes)
    slots = table.mask + 1
    assert slots & table.mask == 0  # power of two
    assert slots * 88 <= megabytes * 1024 * 1024 < slots * 2 * 88 or slots == 1024


def test_hashfull_and_clear() -> None:
    table = TranspositionTable(1)
    for key in range(table.mask + 1):
        table.store(key, 1, EXACT, 0, None, 0)
    assert table.hashfull() == 1000
    table.clear()
    assert table.hashfull() == 0 and entry(table, 3) is None


def test_the_search_reads_entries_as_decode_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """`AlphaBeta.alphabeta` decodes entries inline: its cutoffs and hash move must be `decode`'s."""
    table = TranspositionTable(1)
    pos = Position(chess.Board())
    tree = alphabeta.AlphaBeta(pos, table, Features())
    table.store(pos.key, 6, LOWER, MATE - 9, None, ply=2)  # a mate, stored relative to the node
    assert tree.alphabeta(4, 100, 101, 2) == score_from_tt(decode(table.probe_data(pos.key))[2], 2) == MATE - 9
    assert tree.nodes == 1  # cut off by the entry
    table.store(pos.key, 6, UPPER, -250, None, ply=1)
    assert tree.alphabeta(4, -100, -99, 1) == -250
    table.store(pos.key, 6, EXACT, 37, None, ply=1)
    assert tree.alphabeta(4, 500, 501, 1) == 37

    hash_moves = []
    staged_moves = alphabeta.staged_moves

    def spy(pos, orderer, hash_move, *rest):  # type: ignore[no-untyped-def]
        hash_moves.append(hash_move)
        return staged_moves(pos, orderer, hash_move, *rest)

    monkeypatch.setattr(alphabeta, "staged_moves", spy)
    move = chess.Move.from_uci("b1c3")
    table.store(pos.key, 1, LOWER, 900, move, ply=1)  # too shallow to cut: only its move is used
    tree.alphabeta(2, 500, 501, 1)
    assert hash_moves[0] == decode(table.probe_data(pos.key))[3] == encode_move(move)


# --- the same, through the search: what alpha-beta reads back is what was stored -------------


def window_settled_by(bound: int, score: int) -> int:
    """Alpha of a null window (alpha, alpha + 1) that an entry of this bound and score settles."""
    return score - 1 if bound in (EXACT, LOWER) else score  # LOWER: score >= beta; UPPER: score <= alpha


class RecordingPosition(Position):
    """A Position that remembers the moves played on it."""

    def __init__(self, board: chess.Board) -> None:
        super().__init__(board)
        self.pushed: list[chess.Move] = []

    def push(self, move: chess.Move) -> None:
        self.pushed.append(move)
        super().push(move)


def stored_tree(board: chess.Board, depth: int, bound: int, score: int, move: chess.Move | None,
                ply: int, generation: int, position: type[Position] = Position) -> AlphaBeta:
    table = TranspositionTable(1)
    table.generation = generation  # the generation bits sit above the move: they must be masked off
    pos = position(board.copy())
    table.store(pos.key, depth, bound, score, move, ply)
    return AlphaBeta(pos, table, Features())


@settings(max_examples=150, deadline=None)
@given(
    depth=st.integers(1, 8),
    extra=st.integers(0, 247),
    bound=st.sampled_from([EXACT, LOWER, UPPER]),
    score=st.integers(-(MATE - 200), MATE - 200),
    ply=st.integers(0, 40),
    generation=st.integers(0, 255),
)
@example(depth=1, extra=127, bound=LOWER, score=-3, ply=1, generation=255)  # all 8 depth bits
def test_search_returns_a_stored_score_without_searching(depth, extra, bound, score, ply, generation) -> None:
    """A deep enough entry whose bound settles a null window is the node's value, read back exactly."""
    tree = stored_tree(chess.Board(), depth + extra, bound, score, chess.Move.from_uci("h2h3"), ply, generation)
    alpha = window_settled_by(bound, score)
    assert tree.alphabeta(depth, alpha, alpha + 1, ply) == score
    assert tree.nodes == 1  # no move was searched


@pytest.mark.parametrize("stored_ply, probe_ply", [(4, 2), (2, 9)])
@pytest.mark.parametrize("score", [MATE - 7, -(MATE - 9)])
def test_search_reads_mate_scores_relative_to_the_node(stored_ply, probe_ply, score) -> None:
    """A mate k plies from the node is k plies from it wherever the node is met again."""
    tree = stored_tree(chess.Board(), 5, EXACT, score, None, stored_ply, 3)
    expected = score + stored_ply - probe_ply if score > 0 else score - stored_ply + probe_ply
    alpha = expected - 1
    assert tree.alphabeta(3, alpha, alpha + 1, probe_ply) == expected and tree.nodes == 1


@pytest.mark.parametrize("depth_short, bound, offset", [
    (1, EXACT, 0),      # too shallow
    (0, LOWER, 1),      # a lower bound below beta
    (0, UPPER, -1),     # an upper bound above alpha
])
def test_search_searches_when_the_entry_does_not_settle_the_node(depth_short, bound, offset) -> None:
    depth, score = 3, 40
    tree = stored_tree(chess.Board(), depth - depth_short, bound, score, None, 2, 0)
    alpha = window_settled_by(bound, score) + offset
    tree.alphabeta(depth, alpha, alpha + 1, 2)
    assert tree.nodes > 1


@pytest.mark.parametrize("fen, uci", [
    (chess.STARTING_FEN, "h2h3"),                         # a quiet move ordering puts late
    ("8/P6k/8/8/8/8/8/K7 w - - 0 1", "a7a8n"),           # an underpromotion: the promotion bits
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1c1"),     # castling
])
@settings(max_examples=20, deadline=None)
@given(generation=st.integers(0, 255))
def test_search_tries_the_stored_move_first(fen, uci, generation) -> None:
    board = chess.Board(fen)
    move = chess.Move.from_uci(uci)
    assert move in board.legal_moves
    tree = stored_tree(board, 1, LOWER, -500, move, 0, generation, RecordingPosition)
    tree.alphabeta(2, -INFINITY, INFINITY, 0)  # a PV node, and too shallow an entry: it only orders
    assert tree.pos.pushed[0] == move
