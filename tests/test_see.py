"""Static exchange evaluation: `see_at_least` against a slow, clear reference that plays the exchange out on board copies."""
from __future__ import annotations

import chess
import pytest
from hypothesis import given, settings

from search.see import see_at_least
from search.types import PIECE_VALUE
from tests.strategies import boards


def _least_valuable_attacker(board: chess.Board, color: chess.Color, square: chess.Square) -> chess.Square | None:
    attackers = board.attackers(color, square)
    if not attackers:
        return None
    return min(attackers, key=lambda sq: board.piece_type_at(sq))


def _capture_on(board: chess.Board, frm: chess.Square, to: chess.Square) -> chess.Board:
    """A copy with the piece on `frm` moved onto `to` (whatever stood there is gone)."""
    after = board.copy(stack=False)
    piece = after.remove_piece_at(frm)
    after.set_piece_at(to, piece)
    return after


def _best_recapture(board: chess.Board, square: chess.Square, side: chess.Color) -> int:
    """What `side` gains by recapturing on `square` if it pays (0 if it does not)."""
    frm = _least_valuable_attacker(board, side, square)
    if frm is None:
        return 0
    after = _capture_on(board, frm, square)
    if board.piece_type_at(frm) == chess.KING and after.attackers(not side, square):
        return 0
    won = PIECE_VALUE[board.piece_type_at(square)]
    return max(0, won - _best_recapture(after, square, not side))


def reference_see(board: chess.Board, move: chess.Move) -> int:
    """The exchange on the move's square, played out on copies, least valuable attacker first."""
    side = board.turn
    after = _capture_on(board, move.from_square, move.to_square)
    won = PIECE_VALUE[board.piece_type_at(move.to_square) or chess.PAWN] if board.is_capture(move) else 0
    if board.is_en_passant(move):
        after.remove_piece_at(move.to_square - 8 if side == chess.WHITE else move.to_square + 8)
    if move.promotion:
        after.set_piece_at(move.to_square, chess.Piece(move.promotion, side))
        won += PIECE_VALUE[move.promotion] - PIECE_VALUE[chess.PAWN]
    return won - _best_recapture(after, move.to_square, not side)


@pytest.mark.parametrize(
    "fen, uci, expected",
    [
        ("4k3/8/8/3p4/8/8/8/3QK3 w - - 0 1", "d1d5", 100),  # an undefended pawn
        ("4k3/8/2p5/3p4/8/8/8/3QK3 w - - 0 1", "d1d5", 100 - 950),  # queen for a defended pawn
        ("3rk3/8/8/3r4/8/8/3R4/3RK3 w - - 0 1", "d2d5", 500),  # the x-ray rook decides
        ("3rk3/3r4/8/3r4/8/8/3R4/3RK3 w - - 0 1", "d2d5", 0),  # three defenders: even trade
        ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", 100),  # en passant
        ("4k3/8/8/8/8/8/4p3/3QK3 b - - 0 1", "e2d1q", 950 + 850 - 950),  # promotes taking the queen; the king takes back
    ],
)
def test_known_exchanges(fen: str, uci: str, expected: int) -> None:
    board = chess.Board(fen)
    move = chess.Move.from_uci(uci)
    assert reference_see(board, move) == expected
    assert see_at_least(board, move, expected)
    assert not see_at_least(board, move, expected + 1)
    mailbox = [board.piece_type_at(square) for square in chess.SQUARES]
    assert see_at_least(board, move, expected, mailbox) and not see_at_least(board, move, expected + 1, mailbox)


def test_king_does_not_recapture_a_defended_piece() -> None:
    # Qxf7 next to the black king, but the bishop on c4 defends f7.
    board = chess.Board("4k3/5p2/8/8/2B5/8/8/4KQ2 w - - 0 1")
    move = chess.Move.from_uci("f1f7")
    assert reference_see(board, move) == 100
    assert see_at_least(board, move, 100) and not see_at_least(board, move, 101)


@settings(max_examples=300, deadline=None)
@given(boards(max_plies=80))
def test_matches_the_reference_on_random_positions(board: chess.Board) -> None:
    captures = [move for move in board.legal_moves if board.is_capture(move) or move.promotion]
    for move in captures:
        value = reference_see(board, move)
        # The bar at the value and on either side of it, and the search's own bar (0).
        for threshold in (value - 1, value, value + 1, 0):
            assert see_at_least(board, move, threshold) == (value >= threshold), (board.fen(), move.uci(), threshold)
