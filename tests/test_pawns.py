"""Pawn structure terms: each pattern is recognised, and the terms add up."""
from __future__ import annotations

import chess
from hypothesis import given, settings

from eval import evaluate
from eval.evaluate import evaluate_terms, packed_score, taper
from eval.pawns import DOUBLED, ISOLATED, PASSED_EG, structure
from eval.weights import TEMPO
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


@settings(max_examples=40, deadline=None)
@given(board=boards())
def test_terms_add_up_to_the_evaluation(board: chess.Board) -> None:
    terms = evaluate_terms(board)
    mg = sum(term[0] for term in terms.values())
    eg = sum(term[1] for term in terms.values())
    white_view = taper(mg, eg, packed_score(board).phase)
    expected = (white_view if board.turn == chess.WHITE else -white_view) + TEMPO
    assert evaluate(board) == expected
