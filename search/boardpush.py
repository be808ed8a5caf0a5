"""python-chess's `Board.push`, inlined for the search's ordinary moves.

`Board.push` is general: it converts castling notation, normalises castling
rights, builds a fresh `Move` for the move stack, and finds the moving and
captured pieces through half a dozen method calls.  The search plays every
move through `Position.push`, which has already looked up the moving and
captured pieces, so for a move that is not castling on a plain
`chess.Board` it can make the same change with the bitboards directly.

The result is python-chess's own state and move stack, less one thing:
python-chess's snapshot for `Board.pop` (a `_BoardState` object, built and
restored through attribute copies, about 1.4 µs a move) is not pushed.
`push_plain` returns its own snapshot, a tuple, and `pop_plain` takes the move
back from it (about 0.85 µs a move); `board.pop()` would take back the
wrong move.  A board moved this way, while it is, must not be popped or
copied with its stack by python-chess (`Position` owns its board for a
search, and takes back everything it pushes).  tests/test_boardpush.py
plays random games both ways and compares every field, forth and back.
Castling and any board subclass (variants) go to `Board.push`.
"""

from __future__ import annotations

import chess

_BB_SQUARES = chess.BB_SQUARES
_BB_RANK_1 = chess.BB_RANK_1
_BB_RANK_8 = chess.BB_RANK_8

#: What `push_plain` returns and `pop_plain` restores: every field of the
#: board that a move changes, as python-chess's `_BoardState` holds them.
Snapshot = tuple[int, int, int, int, int, int, int, int, int, int, bool, int, "int | None", int, int]


def push_plain(board: chess.Board, move: chess.Move, piece: chess.PieceType,
               captured: chess.PieceType | None, capture_square: chess.Square) -> Snapshot:
    """`board.push(move)` for a legal move that is not castling; returns what `pop_plain` needs to take it back.

    `piece` is the moving piece's type, `captured` the captured piece's type
    (None: no capture) and `capture_square` where it stands (the target
    square, or the passed pawn's square for en passant).  Hot path: local
    variables, and no calls but the snapshot and the bitboard flips.  Legal
    moves only: a king is never captured, so python-chess's rule for
    castling rights after a king capture (variants) is left out.
    """
    occupied_co = board.occupied_co
    state = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
             occupied_co[chess.WHITE], occupied_co[chess.BLACK], board.occupied, board.promoted,
             board.turn, board.castling_rights, board.ep_square, board.halfmove_clock, board.fullmove_number)
    move_stack = board.move_stack
    if not move_stack:  # python-chess cleans the rights at every push: after the first, they stay clean
        board.castling_rights = board.clean_castling_rights()
    move_stack.append(move)

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
    return state


def pop_plain(board: chess.Board, state: Snapshot) -> chess.Move:
    """Take back the move `push_plain` made, given what it returned; return the move (`board.pop()`'s answer)."""
    (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
     white, black, board.occupied, board.promoted,
     board.turn, board.castling_rights, board.ep_square, board.halfmove_clock, board.fullmove_number) = state
    occupied_co = board.occupied_co
    occupied_co[chess.WHITE] = white
    occupied_co[chess.BLACK] = black
    return board.move_stack.pop()


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
