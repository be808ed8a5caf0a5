"""Pawn structure terms: each pattern is recognised, and the terms add up."""
from __future__ import annotations

import chess
import pytest
from hypothesis import given, settings

from eval import evaluate
from eval.evaluate import evaluate_terms
from eval.pawns import DOUBLED, ISOLATED, PASSED_EG, structure
from tests.reference import reference_evaluate, reference_terms
from tests.strategies import boards


def pawn_structure(fen: str) -> tuple[int, int, int, int]:
    board = chess.Board(fen)
    white = board.occupied_co[chess.WHITE]
    return structure(board.pawns & white, board.pawns & ~white)


def test_passed_pawn_is_found_and_blocked_pawn_is_not() -> None:
    _, _, white_passed, black_passed = pawn_structure("4k3/8/8/3P4/8/8/8/4K3 w - - 0 1")
    assert white_passed == chess.BB_D5 and black_passed == 0
    # An enemy pawn on an adjacent file ahead stops it being passed.
    _, _, white_passed, _ = pawn_structure("4k3/4p3/8/3P4/8/8/8/4K3 w - - 0 1")
    assert white_passed == 0


def test_passed_pawn_bonus_grows_with_rank() -> None:
    endgame = []
    for rank in range(1, 7):
        board = chess.Board("4k3/8/8/8/8/8/8/4K3 w - - 0 1")
        board.set_piece_at(chess.square(0, rank), chess.Piece(chess.PAWN, chess.WHITE))
        endgame.append(pawn_structure(board.fen())[1])
    assert endgame == sorted(endgame) and endgame[0] < endgame[-1]


def test_isolated_and_doubled() -> None:
    isolated = pawn_structure("4k3/8/8/8/8/8/P1P5/4K3 w - - 0 1")  # a2 and c2, both passed too
    connected = pawn_structure("4k3/8/8/8/8/8/PP6/4K3 w - - 0 1")
    assert isolated[0] < connected[0]
    doubled = pawn_structure("4k3/8/8/8/8/P7/P7/4K3 w - - 0 1")
    # Two isolated pawns, one behind the other (only the front one is passed).
    assert doubled[2] == chess.BB_A3
    assert doubled[1] == 2 * ISOLATED[1] + DOUBLED[1] + PASSED_EG[2]


@settings(max_examples=60, deadline=None)
@given(board=boards())
def test_pawn_terms_are_colour_symmetric(board: chess.Board) -> None:
    mirrored = board.mirror()
    assert evaluate(board) == evaluate(mirrored)
    ours, theirs = evaluate_terms(board)["pawns"], evaluate_terms(mirrored)["pawns"]
    assert ours == (-theirs[0], -theirs[1])


@settings(max_examples=80, deadline=None)
@given(board=boards(max_plies=120))
def test_pawn_terms_follow_the_rules(board: chess.Board) -> None:
    """Passed, isolated, doubled, connected pawns and the kings' distances, against tests.reference."""
    assert evaluate_terms(board)["pawns"] == reference_terms(board)["pawns"]
    assert evaluate(board) == reference_evaluate(board)


@pytest.mark.parametrize("fen", [
    "4k3/8/8/3P4/8/8/8/4K3 w - - 0 1",            # a lone passed pawn, kings far from it
    "8/8/4k3/3P4/8/8/8/3K4 b - - 0 1",            # the enemy king in front of it
    "4k3/1p6/1P6/8/3PP3/8/8/4K3 w - - 0 1",       # a phalanx, a blocked pair
    "4k3/8/8/8/p7/P7/P7/4K3 w - - 0 1",           # doubled and blocked
    "8/5k2/8/1p6/1P3p2/5P2/1K6/8 w - - 0 1",      # defended pawns, no passers
])
def test_pawn_terms_of_known_structures(fen: str) -> None:
    board = chess.Board(fen)
    assert evaluate_terms(board)["pawns"] == reference_terms(board)["pawns"]
    assert evaluate(board) == reference_evaluate(board)
