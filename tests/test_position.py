"""The search's incremental state must always equal a from-scratch computation."""
from __future__ import annotations

import random
from collections import Counter

import chess
import chess.polyglot
from hypothesis import given, settings
from hypothesis import strategies as st

from eval import evaluate
from search.position import Position
from search.types import mailbox_of
from tests.strategies import boards, special_move


@settings(max_examples=60, deadline=None)
@given(seed_board=boards(max_plies=30), choices=st.lists(st.integers(min_value=0, max_value=10_000), max_size=80))
def test_incremental_key_and_eval_match_full_computation(seed_board: chess.Board, choices: list[int]) -> None:
    board = seed_board.copy()
    pos = Position(board)
    start_key = pos.key
    played = 0
    for choice in choices:
        moves = list(board.legal_moves)
        if not moves:
            break
        pos.push(moves[choice % len(moves)])
        played += 1
        assert pos.key == chess.polyglot.zobrist_hash(board)
        assert pos.evaluate() == evaluate(board)
        assert pos.mailbox == mailbox_of(board)
    for _ in range(played):
        pos.pop()
        assert pos.key == chess.polyglot.zobrist_hash(board)
        assert pos.evaluate() == evaluate(board)
        assert pos.mailbox == mailbox_of(board)
    assert pos.key == start_key


def test_chess960_games_keep_key_and_eval_in_step() -> None:
    """Fischer random castling (king takes own rook), en passant and promotions are made and unmade exactly.

    Random Chess960 games steered towards those moves (tests.strategies.special_move); over
    the examples each kind must actually have been played, or the test proves nothing.
    """
    played: Counter[str] = Counter()

    @settings(max_examples=60, deadline=None)
    @given(start=st.integers(min_value=0, max_value=959), seed=st.integers(0, 2**32 - 1))
    def game(start: int, seed: int) -> None:
        rng = random.Random(seed)
        board = chess.Board.from_chess960_pos(start)
        pos = Position(board)
        for _ in range(rng.randrange(40, 121)):
            if not any(board.legal_moves):
                break
            move = special_move(board, rng.randrange(10_000))
            played["castling"] += board.is_castling(move)
            played["en passant"] += board.is_en_passant(move)
            played["promotion"] += move.promotion is not None
            pos.push(move)
            assert pos.key == chess.polyglot.zobrist_hash(board)
            assert pos.evaluate() == evaluate(board)
            assert pos.mailbox == mailbox_of(board)
        while board.move_stack:
            pos.pop()
            assert pos.key == chess.polyglot.zobrist_hash(board)
            assert pos.mailbox == mailbox_of(board)
        assert board == chess.Board.from_chess960_pos(start)

    game()
    assert played["castling"] and played["en passant"] and played["promotion"], played


def test_chess960_castling_where_king_and_rook_swap_squares() -> None:
    """King d1 / rook c1 castling queenside: each lands on the other's square."""
    board = chess.Board("2rk4/8/8/8/8/8/8/2RK4 w Cc - 0 1", chess960=True)
    pos = Position(board)
    for uci in ["d1c1", "d8c8"]:
        move = chess.Move.from_uci(uci)
        assert board.is_castling(move)
        pos.push(move)
        assert pos.key == chess.polyglot.zobrist_hash(board)
        assert pos.evaluate() == evaluate(board)
        assert pos.mailbox == mailbox_of(board)
    assert board.piece_at(chess.C1) == chess.Piece(chess.KING, chess.WHITE)
    assert board.piece_at(chess.D1) == chess.Piece(chess.ROOK, chess.WHITE)


def test_special_moves_keep_key_and_eval_in_step() -> None:
    """Castling both ways, en passant, promotion and under-promotion with capture."""
    cases = [
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", ["e1g1", "e8c8", "a1a8"]),
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", ["e1c1", "e8g8", "h1h8"]),
        ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", ["e5d6"]),
        ("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1", ["a7b8n"]),
        ("4k3/P7/8/8/8/8/8/4K3 w - - 0 1", ["a7a8q"]),
        ("4k3/8/8/8/1p6/8/P7/4K3 w - - 0 1", ["a2a4", "b4a3"]),
    ]
    for fen, ucis in cases:
        board = chess.Board(fen)
        pos = Position(board)
        for uci in ucis:
            pos.push(chess.Move.from_uci(uci))
            assert pos.key == chess.polyglot.zobrist_hash(board), (fen, uci)
            assert pos.evaluate() == evaluate(board), (fen, uci)
            assert pos.mailbox == mailbox_of(board), (fen, uci)
        for _ in ucis:
            pos.pop()
            assert pos.mailbox == mailbox_of(board), fen


def test_history_includes_game_moves_for_repetition() -> None:
    """Repetitions against positions before the search root count too."""
    board = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1"):
        board.push_uci(uci)
    pos = Position(board)
    assert not pos.is_draw()
    pos.push(chess.Move.from_uci("f6g8"))  # back to the game's start position
    assert pos.is_draw()


@settings(max_examples=300, deadline=None)
@given(boards())
def test_in_check_matches_python_chess(board: chess.Board) -> None:
    pos = Position(board)
    assert pos.in_check() == board.is_check()
    for move in board.legal_moves:
        pos.push(move)
        assert pos.in_check() == board.is_check(), board.fen()
        pos.pop()


def test_a_repetition_does_not_reach_back_across_a_null_move() -> None:
    """The position before a null move is not repeated by one after it; one after it is."""
    pos = Position(chess.Board())
    start_key = pos.key
    for step in ("g1f3", None, "f3g1", None):
        pos.push_null() if step is None else pos.push(chess.Move.from_uci(step))
    assert pos.key == start_key and not pos.is_draw()  # the start, White to move, but passes in between
    for step in ("g1f3", "g8f6", "f3g1", "f6g8"):
        pos.push(chess.Move.from_uci(step))
    assert pos.is_draw()  # repeats the position just after the second null move
    for _ in range(6):
        pos.pop()
    pos.pop()  # the first null move: scans reach back to the start again
    assert pos.mailbox == mailbox_of(pos.board)
    pos.push(chess.Move.from_uci("b8c6"))
    pos.push(chess.Move.from_uci("f3g1"))
    pos.push(chess.Move.from_uci("c6b8"))
    assert pos.key == start_key and pos.is_draw()
