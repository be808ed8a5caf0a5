"""Evaluation symmetry and sanity."""
from __future__ import annotations

import chess
from hypothesis import given, settings

from eval import evaluate, evaluate_terms
from eval.weights import TEMPO
from tests.strategies import boards


@settings(max_examples=150, deadline=None)
@given(board=boards(max_plies=80))
def test_mirrored_position_scores_the_same_for_the_side_to_move(board: chess.Board) -> None:
    """Colour-flipping the board (and side to move) must not change the evaluation."""
    assert evaluate(board) == evaluate(board.mirror())


@settings(max_examples=100, deadline=None)
@given(board=boards(max_plies=80))
def test_score_is_relative_to_the_side_to_move(board: chess.Board) -> None:
    """Same placement, other side to move: the White-view score flips sign (tempo aside)."""
    other = board.copy(stack=False)
    other.turn = not board.turn
    other.ep_square = None
    assert evaluate(board) - TEMPO == -(evaluate(other) - TEMPO)


def test_material_advantage_is_positive_for_its_owner() -> None:
    up_a_queen = chess.Board("4k3/8/8/8/8/8/8/3QK3 w - - 0 1")
    assert evaluate(up_a_queen) > 800
    up_a_queen.turn = chess.BLACK
    assert evaluate(up_a_queen) < -800


def test_terms_add_up_to_the_packed_score() -> None:
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    terms = evaluate_terms(board)
    assert set(terms) == {"material", "placement", "bishop pair", "pawns"}
    assert terms["material"] == (0, 0)
