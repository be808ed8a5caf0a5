"""Selective search switches: quiet-move pruning (on since its SPRT); singular extensions, IIR,
logarithmic reductions, adaptive null move, deep reverse futility, the table's score as
static evaluation and quiet checks in quiescence (off until their SPRTs).

Also the pieces they stand on: `Position.gives_check` and `Position.quiet_check_test`
(checked against python-chess on every legal move of random games), `Position.quiet_checks`
(against playing every quiet move) and the
`PAWNSTORM_FEATURES` switch a match uses to turn them on.
"""
from __future__ import annotations

import functools
import itertools
import random
from pathlib import Path
from typing import Iterator

import chess
import pytest

from search.driver import Searcher
from search.features import Features
from search.movepick import quiet_moves
from search.position import Position
from search.timeman import Limits
from search.types import EXACT, LOWER, MATE, UPPER
from uci_engine.options import FEATURES_VARIABLE, search_features

PRUNING = Features(quiet_pruning=True)
NO_PRUNING = Features(quiet_pruning=False)
SUITES = Path(__file__).resolve().parent.parent / "data" / "suites"


def random_game_positions(seed: int, chess960: bool) -> Iterator[tuple[chess.Board, Position]]:
    """The positions of 40 random games (up to 100 plies each), with a `Position` that played along."""
    rng = random.Random(seed)
    for game in range(40):
        board = chess.Board(chess960=chess960)
        if chess960:
            board.set_chess960_pos(rng.randrange(960))
        pos = Position(board)
        for _ in range(100):
            moves = list(board.legal_moves)
            if not moves:
                break
            yield board, pos
            pos.push(rng.choice(moves))


@pytest.mark.parametrize("chess960", [False, True])
def test_gives_check_agrees_with_python_chess(chess960: bool) -> None:
    checks = asked = 0
    for board, pos in random_game_positions(7 + chess960, chess960):
        for move in board.legal_moves:
            expected = board.gives_check(move)
            assert pos.gives_check(move) == expected, (board.fen(), move.uci())
            checks += expected
            asked += 1
    assert checks > 100 and asked > 10_000  # the random games did give checks


@pytest.mark.parametrize("chess960", [False, True])
def test_quiet_check_test_agrees_with_python_chess(chess960: bool) -> None:
    checks = asked = 0
    for board, pos in random_game_positions(17 + chess960, chess960):
        if board.is_check():
            continue  # asked only where quiet moves are pruned
        gives_check, reach = pos.quiet_check_test()
        for move in board.legal_moves:
            expected = board.gives_check(move)
            assert gives_check(move) == expected, (board.fen(), move.uci())
            checks += expected
            asked += 1
        # The squares it names hold every quiet check, so a generator may be asked for those alone.
        expected_quiets = [move for move in quiet_moves(board) if board.gives_check(move)]
        assert [move for move in quiet_moves(board, reach) if gives_check(move)] == expected_quiets
    assert checks > 100 and asked > 10_000


@pytest.mark.parametrize("fen, move", [
    ("4k3/8/8/8/8/8/4B3/4R1K1 w - - 0 1", "e2b5"),       # discovered check by the rook, direct by the bishop
    ("4k3/8/8/8/8/8/4N3/4R1K1 w - - 0 1", "e2c3"),       # discovered check only
    ("4k3/8/8/8/4K3/8/8/4R3 w - - 0 1", "e4d4"),         # the king discovers the rook's check
    ("4k3/8/8/8/4K3/8/8/4R3 w - - 0 1", "e4e3"),         # the king stays on the file: no check
    ("4k3/4P3/8/8/8/8/8/4R1K1 w - - 0 1", "g1f2"),       # a pawn blocks the file: no check
    ("4k3/8/3P4/8/8/8/8/6K1 w - - 0 1", "d6d7"),         # a pawn's check
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5e6"),       # a pawn's push on the king's file
    ("8/8/8/k1pP3R/8/8/8/4K3 w - c6 0 1", "d5c6"),        # en passant opens the rank: discovered check
    ("r3k2r/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1"),         # castling without check
    ("5k2/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1"),           # castling gives check along the f-file
    ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8q"),         # promotion with check along the rank
    ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8n"),         # an underpromotion without check
])
def test_gives_check_special_moves(fen: str, move: str) -> None:
    board = chess.Board(fen)
    parsed = chess.Move.from_uci(move)
    assert parsed in board.legal_moves
    pos = Position(board)
    assert pos.gives_check(parsed) == board.gives_check(parsed)
    assert pos.quiet_check_test()[0](parsed) == board.gives_check(parsed)


def direct_quiet_checks(board: chess.Board) -> set[chess.Move]:
    """The slow reference for `Position.quiet_checks`: play each quiet move and ask who attacks the king."""
    found = set()
    for move in board.legal_moves:
        if (board.is_capture(move) or move.promotion or board.is_castling(move)
                or board.piece_type_at(move.from_square) == chess.KING):
            continue
        board.push(move)
        if board.attackers(not board.turn, board.king(board.turn)) & chess.BB_SQUARES[move.to_square]:
            found.add(move)
        board.pop()
    return found


def test_quiet_checks_agree_with_playing_every_quiet_move() -> None:
    rng = random.Random(11)
    total = 0
    for game in range(25):
        board = chess.Board()
        for _ in range(100):
            moves = list(board.legal_moves)
            if not moves:
                break
            expected = direct_quiet_checks(board)
            assert set(Position(board.copy()).quiet_checks()) == expected, board.fen()
            total += len(expected)
            board.push(rng.choice(moves))
    assert total > 500  # the random games had checks to find


def test_quiet_checks_leave_out_en_passant_but_not_its_square() -> None:
    # After ...e7-e5, Qe6+ lands on the en-passant square quietly; dxe6+ is a capture.
    board = chess.Board("8/5k2/8/3Pp3/8/7Q/8/4K3 w - e6 0 2")
    assert board.gives_check(chess.Move.from_uci("d5e6"))
    checks = {move.uci() for move in Position(board).quiet_checks()}
    assert "h3e6" in checks and "h3h7" in checks and "d5e6" not in checks


@pytest.mark.parametrize("checks", [True, False])
def test_quiescence_with_checks_sees_a_quiet_mate(checks: bool) -> None:
    """A back-rank mate one ply past the horizon: only quiescence with checks sees it."""
    from search.alphabeta import AlphaBeta
    from search.tt import TranspositionTable
    from search.types import INFINITY
    tree = AlphaBeta(Position(chess.Board("6k1/5ppp/8/8/8/8/8/3R2K1 w - - 0 1")), TranspositionTable(1),
                     Features(qs_checks=checks))
    assert (tree.quiescence(-INFINITY, INFINITY, 0, checks) == MATE - 1) == checks


MIDDLEGAMES = [
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N2N2/PP2BPPP/R2QKB1R w KQ - 0 9",
    "r2q1rk1/1b2bppp/p2p1n2/1pn1p3/4P3/1BN2N1P/PPP2PP1/R1BQR1K1 w - - 0 12",
    "2rq1rk1/pb1nbppp/1p2pn2/2pp4/3P4/1P1BPN2/PBPN1PPP/R2Q1RK1 w - - 0 11",
]


@pytest.mark.parametrize("fen", MIDDLEGAMES)
def test_quiet_pruning_searches_fewer_nodes_and_plays_legal_moves(fen: str) -> None:
    board = chess.Board(fen)
    full = Searcher(1, NO_PRUNING).search(board, Limits(depth=5))
    pruned = Searcher(1, PRUNING).search(board, Limits(depth=5))
    assert pruned.nodes < full.nodes
    assert pruned.best_move in board.legal_moves
    assert abs(pruned.score - full.score) < 300  # a pruned tree, not a different game


@pytest.mark.parametrize("fen", open(SUITES / "mate2.fen").read().splitlines()[:12])
def test_quiet_pruning_keeps_the_mates(fen: str) -> None:
    """Mates in two (the bundled suite's first twelve), whose lines run
    through the shallow nodes where pruning looks: checks are never skipped."""
    board = chess.Board(fen)
    pruned = Searcher(1, PRUNING).search(board, Limits(depth=4))
    assert pruned.score == MATE - 3


def test_quiet_pruning_is_on_by_default_and_off_in_the_exact_search() -> None:
    assert Features().quiet_pruning
    assert not Features.exact().quiet_pruning
    assert not Features().with_spec("-quiet_pruning")[0].quiet_pruning


def test_feature_spec_turns_switches_on_and_off() -> None:
    features, problems = Features().with_spec("-quiet_pruning, -null_move,aspiration=0 +pvs")
    assert problems == []
    assert not features.quiet_pruning and not features.null_move and not features.aspiration and features.pvs
    same, problems = Features().with_spec("")
    assert same == Features() and problems == []


def test_feature_spec_names_what_it_cannot_use() -> None:
    features, problems = Features().with_spec("-quiet_pruning,warp_drive,null_move=maybe")
    assert not features.quiet_pruning and features.null_move
    assert len(problems) == 2
    assert "warp_drive" in problems[0] and "null_move=maybe" in problems[1]


def test_engine_reads_its_switches_from_the_environment() -> None:
    features, problems = search_features({FEATURES_VARIABLE: "-quiet_pruning"})
    assert not features.quiet_pruning and problems == []
    features, problems = search_features({})
    assert features == Features() and problems == []
    _, problems = search_features({FEATURES_VARIABLE: "nonsense"})
    assert problems and problems[0].startswith(FEATURES_VARIABLE)


def test_uci_handshake_names_a_bad_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_uci_protocol import Harness
    monkeypatch.setenv(FEATURES_VARIABLE, "-quiet_pruning,nonsense")
    harness = Harness()
    try:
        assert not harness.engine.searcher.features.quiet_pruning
        harness.send("uci")
        assert any("nonsense" in line for line in harness.info_strings())
        assert harness.lines()[-1] == "uciok"
    finally:
        harness.close()


# --- singular extensions and internal iterative reduction ----------------

SINGULAR = Features(singular_extensions=True)


def singular_test(fen: str, move: str, depth: int = 5) -> tuple[int, int]:
    """(score of the node's other moves at half depth, the node's full score) with `move` left out."""
    from search.alphabeta import AlphaBeta
    from search.tt import TranspositionTable, encode_move
    from search.types import INFINITY
    board = chess.Board(fen)
    tree = AlphaBeta(Position(board), TranspositionTable(1), SINGULAR)
    full = tree.alphabeta(depth, -INFINITY, INFINITY, 1)
    others = tree._singular(encode_move(chess.Move.from_uci(move)), depth, full - 2 * depth, 1)
    return others, full


def test_a_lone_winning_capture_is_singular() -> None:
    # Only the knight can take the queen: every other move is far worse.
    others, full = singular_test("4k3/8/8/3q4/8/4N3/8/4K3 w - - 0 1", "e3d5")
    assert others < full - 10


def test_two_equal_captures_are_not_singular() -> None:
    # Either knight takes the queen: leaving one out changes nothing.
    others, full = singular_test("4k3/8/8/3q4/8/2N1N3/8/4K3 w - - 0 1", "e3d5")
    assert others >= full - 10


def test_a_forced_move_is_singular_and_the_test_leaves_no_trace() -> None:
    """The only legal move left out: the test fails low; no table entry is written by it."""
    from search.alphabeta import AlphaBeta
    from search.tt import TranspositionTable, encode_move
    board = chess.Board("k7/8/8/8/8/8/1r6/K6r w - - 0 1")  # in check: Kxb2 is the one legal move
    assert [move.uci() for move in board.legal_moves] == ["a1b2"]
    tt = TranspositionTable(1)
    tree = AlphaBeta(Position(board), tt, SINGULAR)
    key = tree.pos.key
    assert tree._singular(encode_move(chess.Move.from_uci("a1b2")), 6, 50, 1) == 49
    assert tt.probe_data(key) == 0
    assert tree.excluded == [0] * len(tree.excluded)


@pytest.mark.parametrize("features", [SINGULAR, Features(iir=True), Features(log_reductions=True),
                                      Features(adaptive_null_move=True), Features(deep_rfp=True),
                                      Features(tt_static_eval=True), Features(qs_checks=True),
                                      Features(qs_tt=True), Features(continuation_history=True),
                                      Features(main_see_pruning=True), Features(history_reductions=True),
                                      Features(singular_extensions=True, iir=True, quiet_pruning=True,
                                               log_reductions=True, adaptive_null_move=True, deep_rfp=True,
                                               tt_static_eval=True, qs_checks=True, qs_tt=True,
                                               continuation_history=True, main_see_pruning=True,
                                               history_reductions=True)],
                         ids=["singular", "iir", "log_reductions", "adaptive_null_move", "deep_rfp",
                              "tt_static_eval", "qs_checks", "qs_tt", "continuation_history", "main_see_pruning",
                              "history_reductions", "all"])
def test_selective_switches_keep_the_mates_and_play_legal_moves(features: Features) -> None:
    for fen in open(SUITES / "mate2.fen").read().splitlines()[:6]:
        assert Searcher(1, features).search(chess.Board(fen), Limits(depth=4)).score == MATE - 3
    for fen in MIDDLEGAMES:
        board = chess.Board(fen)
        result = Searcher(1, features).search(board, Limits(depth=6))
        assert result.best_move in board.legal_moves


@functools.cache
def tree_nodes(fen: str, features: Features = Features()) -> int:
    """Nodes searched to depth 7 (cached: the default search is the baseline of every switch)."""
    return Searcher(1, features).search(chess.Board(fen), Limits(depth=7)).nodes


@pytest.mark.parametrize("name", ["singular_extensions", "log_reductions", "adaptive_null_move", "deep_rfp",
                                  "tt_static_eval", "qs_checks", "qs_tt",
                                  "continuation_history", "main_see_pruning", "history_reductions"])
def test_each_switch_changes_the_tree(name: str) -> None:
    """Each switch reaches the tree: across the middlegames, other node counts to the same depth.

    Not necessarily fewer: a null-move search that is shallower is cheaper but
    cuts less often, and the table and the ordering follow a different tree (at
    depth 7, adaptive_null_move searched 32,980, 17,498 and 26,414 nodes
    against 32,356, 18,003 and 22,833).  Whether a switch gains is for a match
    to say.
    """
    switched = Features(**{name: True})
    assert [tree_nodes(fen, switched) for fen in MIDDLEGAMES] != [tree_nodes(fen) for fen in MIDDLEGAMES]


def test_adaptive_null_move_reduces_more_with_depth_and_margin() -> None:
    """The null-move search's depth: the default's, then the adaptive one's at a small and a large margin."""
    from search import alphabeta
    depths: list[int] = []

    class Probe(alphabeta.AlphaBeta):
        def alphabeta(self, depth: int, alpha: int, beta: int, ply: int) -> int:
            if ply == 1:
                depths.append(depth)
                return -beta  # the null move fails high: the node is cut
            return super().alphabeta(depth, alpha, beta, ply)

    from search.tt import TranspositionTable
    board = chess.Board(MIDDLEGAMES[0])
    board.push(next(iter(board.legal_moves)))  # a last move that is not a null move
    for features, static in ((Features(), 0), (Features(adaptive_null_move=True), 0),
                             (Features(adaptive_null_move=True), 1000)):
        tree = Probe(Position(board), TranspositionTable(1), features)
        assert tree._prune_by_static_eval(9, 0, 0, static) is not None  # cut by the null move
    # default: 9 - 1 - (2 + 9 // 6); adaptive: 9 - 1 - (3 + 9 // 3), then at most two plies more
    assert depths == [5, 2, 0]


@pytest.mark.parametrize("bound, offset, tighter", [
    (EXACT, 150, True), (EXACT, -150, True),
    (LOWER, 150, True), (LOWER, -150, False),     # a lower bound below the evaluation says nothing
    (UPPER, -150, True), (UPPER, 150, False),
])
def test_tt_static_eval_takes_the_tables_score_only_where_its_bound_is_tighter(bound: int, offset: int,
                                                                                tighter: bool) -> None:
    from search.alphabeta import AlphaBeta
    from search.tt import TranspositionTable
    board = chess.Board(MIDDLEGAMES[0])
    tt = TranspositionTable(1)
    tree = AlphaBeta(Position(board), tt, Features(tt_static_eval=True))
    static = tree.pos.evaluate()
    tt.store(tree.pos.key, 3, bound, static + offset, None, 0)
    data = tt.probe_data(tree.pos.key)
    assert tree._static_eval(data) == (static + offset if tighter else static)
    assert AlphaBeta(Position(board), tt)._static_eval(data) == static  # off: always the evaluation
    mate = TranspositionTable(1)
    mate.store(tree.pos.key, 3, EXACT, MATE - 5, None, 0)
    assert tree._static_eval(mate.probe_data(tree.pos.key)) == static  # mate scores are not evaluations


def test_log_reductions_grow_with_depth_and_move_number_and_keep_a_ply() -> None:
    from search.alphabeta import LOG_REDUCTIONS
    for depth in range(1, 64):
        row = LOG_REDUCTIONS[depth]
        assert row[1:] == sorted(row[1:])  # never less for a later move
        if depth > 1:
            assert all(a >= b for a, b in zip(row, LOG_REDUCTIONS[depth - 1]))
    assert LOG_REDUCTIONS[3][3] == 1 and LOG_REDUCTIONS[20][40] >= 4


def test_selective_switches_are_off_by_default_and_in_the_exact_search() -> None:
    for name in ("singular_extensions", "iir", "log_reductions", "adaptive_null_move", "deep_rfp", "tt_static_eval",
                 "qs_checks", "qs_tt", "continuation_history", "main_see_pruning", "history_reductions"):
        assert not getattr(Features(), name)
        assert not getattr(Features.exact(), name)


# White's queen on d1 can take a pawn defended twice (Qxd5: -850 by SEE), the
# knight on c3 the same pawn or the b5 pawn (-220 each) or the bishop on e2
# (a dearer piece: its exchange is not worked out); Qa4 puts the queen where
# the b5 pawn takes it (-850), Qd2 where nothing attacks it.
SEE_POSITION = "4k3/8/2p1p3/1p1p4/8/2N5/4b3/3QK3 w - - 0 1"


@pytest.mark.parametrize("uci, depth, futile", [
    ("d1d5", 1, True),    # -850 < -200
    ("d1d5", 4, True),    # -850 < -800
    ("c3d5", 1, True),    # -220 < -200
    ("c3d5", 2, False),   # -220 is not below -400
    ("c3b5", 1, True),
    ("c3e2", 1, False),   # a knight takes a bishop: not worked out
    ("d1a4", 4, True),    # quiet: -850 < -40 * 16
    ("d1a4", 5, False),   # -850 is not below -1000
    ("d1d2", 1, False),   # nothing attacks d2
    ("e1f2", 1, False),   # a king move: never worked out
    ("e1e2", 1, False),   # the king takes the bishop
])
def test_main_see_pruning_skips_what_loses_more_than_the_depth_allows(uci: str, depth: int, futile: bool) -> None:
    from search.alphabeta import AlphaBeta
    from search.tt import TranspositionTable
    board = chess.Board(SEE_POSITION)
    move = chess.Move.from_uci(uci)
    tactical = board.is_capture(move)
    tree = AlphaBeta(Position(board), TranspositionTable(1), Features(main_see_pruning=True))
    assert tree._see_futile(move, tactical, depth) is futile


# White to move can win the black queen: quiescence has captures to search.
QS_POSITION = "r1b1kbnr/pppp1ppp/2n5/4p1q1/3PP3/5N2/PPP2PPP/RNBQKB1R w KQkq - 0 1"


def test_qs_tt_stores_quiescence_results_at_depth_zero_and_leaves_deeper_ones() -> None:
    from search.alphabeta import AlphaBeta
    from search.tt import TranspositionTable, decode
    board = chess.Board(QS_POSITION)
    tt = TranspositionTable(1)
    tree = AlphaBeta(Position(board), tt, Features(qs_tt=True))
    score = tree.quiescence(-MATE, MATE, 0)
    depth, bound, stored, move = decode(tt.probe_data(tree.pos.key))
    assert (depth, bound, stored) == (0, EXACT, score) and move  # the best capture
    assert AlphaBeta(Position(board), TranspositionTable(1)).quiescence(-MATE, MATE, 0) == score  # as without
    # A deeper result for the same position stays as it was.
    tt.store(tree.pos.key, 4, LOWER, score - 7, None, 0)
    before = tt.probe_data(tree.pos.key)
    tree.quiescence(-MATE, MATE, 0)
    assert tt.probe_data(tree.pos.key) == before
    # Off: quiescence neither reads nor writes the table.
    off = TranspositionTable(1)
    AlphaBeta(Position(board), off, Features()).quiescence(-MATE, MATE, 0)
    assert off.used == 0


@pytest.mark.parametrize("bound, offset, cut", [(LOWER, 30, True), (LOWER, -30, False), (UPPER, -30, True),
                                                (UPPER, 30, False), (EXACT, 500, True)])
def test_qs_tt_cuts_a_null_window_on_a_bound_that_decides_it(bound: int, offset: int, cut: bool) -> None:
    """The table's score returned at once (one node) where its bound settles the null window; else a search."""
    from search.alphabeta import AlphaBeta
    from search.tt import TranspositionTable
    board = chess.Board(QS_POSITION)
    tt = TranspositionTable(1)
    tree = AlphaBeta(Position(board), tt, Features(qs_tt=True))
    beta = tree.pos.evaluate() + 100  # above standing pat: without the table, captures are searched
    table_score = beta + offset if bound != UPPER else beta - 1 + offset
    tt.store(tree.pos.key, 0, bound, table_score, None, 0)
    score = tree.quiescence(beta - 1, beta, 0)
    assert (tree.nodes == 1 and score == table_score) == cut
    tree.nodes = 0
    tree.quiescence(beta - 50, beta, 0)  # a wider window: never cut by the table
    assert tree.nodes > 1


def _late_move_depths(features: Features, failed: chess.Move) -> dict[chess.Move, int]:
    """The depth each root move's first search gets at depth 6, `failed` alone with a history below zero."""
    from search import alphabeta
    from search.tt import TranspositionTable
    depths: dict[chess.Move, int] = {}

    class Probe(alphabeta.AlphaBeta):
        def alphabeta(self, depth: int, alpha: int, beta: int, ply: int) -> int:
            if ply == 1:
                move = self.pos.board.move_stack[-1]
                depths.setdefault(move, depth)
                return 0 if len(depths) == 1 else beta  # the first move scores 0, later ones fail low: no re-search
            return super().alphabeta(depth, alpha, beta, ply)

    board = chess.Board(MIDDLEGAMES[0])
    tree = Probe(Position(board), TranspositionTable(1), features)
    tree.orderer.history[board.turn][failed.from_square * 64 + failed.to_square] = -5
    tree.alphabeta(6, -1000, 1000, 0)
    return depths


def test_history_reductions_reduce_a_failed_quiet_move_one_ply_more() -> None:
    failed = chess.Move.from_uci("a2a3")
    plain = _late_move_depths(Features(), failed)
    deeper = _late_move_depths(Features(history_reductions=True), failed)
    assert set(plain) == set(deeper) and failed in plain
    assert deeper[failed] == plain[failed] - 1
    assert all(deeper[move] == plain[move] for move in plain if move != failed)


def test_main_see_pruning_leaves_out_only_exchanges_that_cannot_lose_the_margin() -> None:
    """`_see_futile` against the plain rule (SEE below the margin) on every move of random games, at each depth."""
    from search.alphabeta import SEE_CAPTURE_MARGIN, SEE_QUIET_MARGIN, SEE_PRUNING_MAX_DEPTH, AlphaBeta
    from search.see import see
    from search.tt import TranspositionTable
    from search.types import PIECE_VALUE
    checked = 0
    for board, pos in itertools.islice(random_game_positions(551, chess960=False), 0, 4000, 4):
        if board.is_check():
            continue
        tree = AlphaBeta(pos, TranspositionTable(1), Features(main_see_pruning=True))
        for move in board.legal_moves:
            tactical = board.is_capture(move) or bool(move.promotion)
            victim = board.piece_type_at(move.to_square)
            worked_out = not move.promotion and (not tactical or (
                victim is not None and PIECE_VALUE[victim] < PIECE_VALUE[board.piece_type_at(move.from_square)]))
            for depth in range(1, SEE_PRUNING_MAX_DEPTH + 1):
                margin = SEE_CAPTURE_MARGIN * depth if tactical else SEE_QUIET_MARGIN * depth * depth
                assert tree._see_futile(move, tactical, depth) == (worked_out and see(board, move) < -margin)
                checked += 1
    assert checked > 10_000
