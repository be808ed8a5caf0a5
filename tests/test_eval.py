"""Evaluation symmetry and sanity."""
from __future__ import annotations

import chess
import pytest
from hypothesis import given, settings

from eval import evaluate, evaluate_terms
from eval.weights import TEMPO
from tests.reference import reference_phase, reference_tapered, reference_terms
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


def test_terms_of_a_known_position() -> None:
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    terms = evaluate_terms(board)
    assert set(terms) == {"material", "placement", "bishop pair", "pawns"}
    assert terms["material"] == (0, 0) and terms["bishop pair"] == (0, 0)
    assert terms == reference_terms(board)


@pytest.mark.parametrize("fen", [
    "rnbqkbnr/pppppppp/8/8/3Q4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 1",   # a promoted queen: phase 28, counted as 24
    "4k3/8/8/8/8/8/8/R3K3 b - - 0 1",                              # a rook: phase 2, nearly an endgame
    "2b1k3/8/8/8/8/8/8/1B2KB2 w - - 0 1",                          # a bishop pair against one bishop
])
def test_known_positions_add_up(fen: str) -> None:
    board = chess.Board(fen)
    assert board.is_valid()
    terms = evaluate_terms(board)
    assert terms == reference_terms(board)
    white_view = reference_tapered(terms, reference_phase(board))
    assert evaluate(board) == (white_view if board.turn == chess.WHITE else -white_view) + TEMPO


@settings(max_examples=150, deadline=None)
@given(board=boards(max_plies=120))
def test_terms_add_up_to_the_evaluation(board: chess.Board) -> None:
    """The `eval` command's terms are the rules' terms, and blended by phase they are `evaluate`."""
    terms = evaluate_terms(board)
    assert terms == reference_terms(board)
    white_view = reference_tapered(terms, reference_phase(board))
    assert evaluate(board) == (white_view if board.turn == chess.WHITE else -white_view) + TEMPO
