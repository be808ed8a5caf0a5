"""python-chess's `Board.push`, inlined for the search's ordinary moves.

`Board.push` is general: it converts castling notation, normalises castling
rights, builds a fresh `Move` for the move stack, and finds the moving and
captured pieces through half a dozen method calls.  The search plays every
move through `Position.push`, which has already looked up the moving and
captured pieces, so for a move that is not castling on a plain
`chess.Board` it can make the same change with the bitboards directly.

The result is python-chess's own state, stack included (`board.pop()` takes
the move back as usual); tests/test_boardpush.py plays random games both
ways and compares every field.  Castling and any board subclass (variants)
go to `Board.push`.
"""

from __future__ import annotations

import chess

# python-chess's private snapshot class: pushing one is what lets `Board.pop` undo the move.
from chess import _BoardState  # type: ignore[attr-defined]

_BB_SQUARES = chess.BB_SQUARES
_BB_RANK_1 = chess.BB_RANK_1
_BB_RANK_8 = chess.BB_RANK_8


def push_plain(board: chess.Board, move: chess.Move, piece: chess.PieceType,
               captured: chess.PieceType | None, capture_square: chess.Square) -> None:
    """`board.push(move)` for a legal move that is not castling.

    `piece` is the moving piece's type, `captured` the captured piece's type
    (None: no capture) and `capture_square` where it stands (the target
    square, or the passed pawn's square for en passant).  Hot path: local
    variables, and no calls but the snapshot and the bitboard flips.  Legal
    moves only: a king is never captured, so python-chess's rule for
    castling rights after a king capture (variants) is left out.
    """
    state = _BoardState(board)
    if not board._stack:  # python-chess filters the rights before a game's first push
        board.castling_rights = board.clean_castling_rights()
    board.move_stack.append(move)
    board._stack.append(state)

    us = board.turn
    frm = move.from_square
    to = move.to_square
    from_bb = _BB_SQUARES[frm]
    to_bb = _BB_SQUARES[to]

    ep_square = None
    if piece == chess.PAWN:
        board.halfmove_clock = 0
        if to - frm == 16 and frm >> 3 == 1:
            ep_square = frm + 8
        elif frm - to == 16 and frm >> 3 == 6:
            ep_square = frm - 8
    elif captured:
        board.halfmove_clock = 0
    else:
        board.halfmove_clock += 1
    board.ep_square = ep_square
    if not us:
        board.fullmove_number += 1

    promoted = board.promoted
    was_promoted = promoted & from_bb
    rights = board.castling_rights
    if rights:
        rights &= ~to_bb & ~from_bb
        if piece == chess.KING and not was_promoted:
            rights &= ~(_BB_RANK_1 if us else _BB_RANK_8)
        board.castling_rights = rights

    # Lift the mover and the captured piece, set the mover (or what it
    # promotes to) down.  The flips commute, so a mover that stays what it
    # is leaves and lands in one flip of its bitboard.
    promotion = move.promotion
    if promotion:
        _toggle(board, piece, from_bb)
        _toggle(board, promotion, to_bb)
    else:
        _toggle(board, piece, from_bb | to_bb)
    occupied_co = board.occupied_co
    occupied_co[us] ^= from_bb
    occupied = board.occupied ^ from_bb
    if captured:
        capture_bb = _BB_SQUARES[capture_square]
        _toggle(board, captured, capture_bb)
        occupied_co[not us] ^= capture_bb
        occupied ^= capture_bb
        promoted &= ~capture_bb
    occupied_co[us] |= to_bb
    board.occupied = occupied | to_bb
    if promotion or was_promoted:
        promoted = promoted & ~from_bb | to_bb
    board.promoted = promoted
    board.turn = not us


def _toggle(board: chess.Board, piece: chess.PieceType, mask: chess.Bitboard) -> None:
    """Flip `mask` in `piece`'s bitboard."""
    if piece == chess.PAWN:
        board.pawns ^= mask
    elif piece == chess.KNIGHT:
        board.knights ^= mask
    elif piece == chess.BISHOP:
        board.bishops ^= mask
    elif piece == chess.ROOK:
        board.rooks ^= mask
    elif piece == chess.QUEEN:
        board.queens ^= mask
    else:
        board.kings ^= mask
