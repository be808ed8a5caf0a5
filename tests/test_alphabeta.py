"""Alpha-beta is a speed-up of minimax, never an approximation."""
from __future__ import annotations

import chess
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from search.alphabeta import AlphaBeta
from search.driver import Searcher
from search.features import Features
from search.position import Position
from search.timeman import Limits
from search.tt import TranspositionTable
from search.types import INFINITY, MATE
from tests.gametree import GameTree, UnexpectedLeaf, binary_tree
from tests.reference import minimax
from tests.strategies import boards


def plain_alphabeta(tree: GameTree, depth: int) -> int:
    return AlphaBeta(tree, TranspositionTable(1), Features.plain()).alphabeta(depth, -INFINITY, INFINITY, 0)


def test_lecture_tree_a_to_r() -> None:
    """The A..R tree: value 6, leaves E, K, Q, N, H, I evaluated, L, R, O, P pruned."""
    children = {
        "A": ["B", "C", "D"], "B": ["E", "F"], "C": ["G", "H"], "D": ["I", "J"],
        "F": ["K", "L"], "G": ["M", "N"], "J": ["O", "P"], "M": ["Q", "R"],
    }
    leaves = {"E": 2, "K": 3, "L": 0, "Q": 1, "R": None, "N": 7, "H": 6, "I": 1, "O": 2, "P": 20}
    tree = GameTree(children, leaves)
    assert plain_alphabeta(tree, 4) == 6
    assert tree.evaluated == ["E", "K", "Q", "N", "H", "I"]


def test_lecture_tree_sixteen_leaves() -> None:
    values = [50, 40, 30, None, 70, 60, None, None, 30, None, 70, 80, 80, 90, None, None]
    tree = binary_tree(values)
    assert plain_alphabeta(tree, 4) == 70
    assert len(tree.evaluated) == 10
    assert [tree.leaves[leaf] for leaf in tree.evaluated] == [50, 40, 30, 70, 60, 30, 70, 80, 80, 90]


def test_game_tree_adapter_detects_missed_pruning() -> None:
    """Minimax (no pruning) on the A..R tree must trip over a '?' leaf: the check has teeth."""
    children = {"A": ["B", "C"], "B": ["D", "E"], "C": ["F", "G"]}
    tree = GameTree(children, {"D": 3, "E": 5, "F": 4, "G": None})
    # F=4 > 3 = B's value does not refute C, so G must be looked at.
    with pytest.raises(UnexpectedLeaf):
        plain_alphabeta(tree, 2)


def exact_value(board: chess.Board, depth: int, features: Features) -> int:
    result = Searcher(1, features).search(board, Limits(depth=depth))
    return result.score


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=boards(), depth=st.integers(min_value=1, max_value=2))
def test_alphabeta_equals_minimax_shallow(board: chess.Board, depth: int) -> None:
    """Iterative deepening + PVS + TT + ordering = minimax (exact mode).

    Aspiration windows start at ASPIRATION_MIN_DEPTH, deeper than these:
    tests/test_aspiration.py checks them, re-searches included, against minimax.
    """
    assert exact_value(board, depth, Features.exact()) == minimax(board, depth)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=boards(max_plies=40))
def test_alphabeta_equals_minimax_depth3(board: chess.Board) -> None:
    assert exact_value(board, 3, Features.exact()) == minimax(board, 3)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=boards(max_plies=50), depth=st.integers(min_value=1, max_value=2))
def test_plain_alphabeta_equals_minimax(board: chess.Board, depth: int) -> None:
    """Without any speed-ups (natural order, full windows) the value is the same."""
    plain = Features.plain()
    tree = AlphaBeta(Position(board.copy()), TranspositionTable(1), plain)
    assert tree.alphabeta(depth, -INFINITY, INFINITY, 0) == minimax(board, depth)


@pytest.mark.parametrize(
    "fen, mate_score",
    [
        ("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", MATE - 1),  # back-rank mate in 1
        ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", 0),  # stalemate: no legal move, not in check
    ],
)
def test_mate_and_stalemate_scores(fen: str, mate_score: int) -> None:
    board = chess.Board(fen)
    result = Searcher(1).search(board, Limits(depth=3))
    if board.is_stalemate():
        assert result.best_move is None and result.score == 0
    else:
        assert result.score == mate_score
        board.push(result.best_move)
        assert board.is_checkmate()


def test_prefers_shorter_mate() -> None:
    """Mate in 1 scores higher than a mate in 2 found in the same tree."""
    board = chess.Board("k7/8/1K6/8/8/8/8/7R w - - 0 1")  # Rh8# is mate in 1
    result = Searcher(4).search(board, Limits(depth=4))
    assert result.score == MATE - 1
    assert result.best_move == chess.Move.from_uci("h1h8")


def test_repetition_is_a_draw_inside_the_search() -> None:
    """One repetition of a position (same side to move) is scored as a draw."""
    board = chess.Board("7k/8/8/8/8/8/8/K4Q2 w - - 0 1")
    assert board.is_valid()
    pos = Position(board.copy())
    for uci in ("f1f2", "h8g8", "f2f1", "g8h8"):
        pos.push(chess.Move.from_uci(uci))
    assert pos.is_draw()  # same position as at the start, same side to move
    pos.pop()
    assert not pos.is_draw()


def test_fifty_move_rule_is_a_draw_inside_the_search() -> None:
    board = chess.Board("7k/8/8/8/8/8/8/K5Q1 w - - 99 80")
    assert board.is_valid()
    pos = Position(board)
    pos.push(chess.Move.from_uci("g1g2"))
    assert pos.is_draw()


def test_quiescence_sees_a_hanging_queen_defended() -> None:
    """At depth 1 without quiescence QxP looks good; quiescence sees the recapture."""
    board = chess.Board("4k3/8/2p5/3p4/8/8/3Q4/4K3 w - - 0 1")  # Qxd5 cxd5 loses the queen
    with_q = Searcher(1).search(board, Limits(depth=1))
    without_q = Searcher(1, Features(quiescence=False)).search(board, Limits(depth=1))
    assert without_q.best_move == chess.Move.from_uci("d2d5")
    assert with_q.best_move != chess.Move.from_uci("d2d5")
    assert with_q.score > -300


def test_seldepth_shows_uneven_development() -> None:
    """Quiescence and check extensions search dynamic lines past the nominal depth."""
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    reports = []
    Searcher(4).search(board, Limits(depth=3), on_iteration=reports.append)
    assert reports[-1].depth == 3
    assert reports[-1].seldepth > 3
