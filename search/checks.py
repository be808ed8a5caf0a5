"""Which moves give check, asked without playing them.

Quiet-move pruning keeps the quiet moves that give check; python-chess
answers `gives_check` by
pushing and popping the move.  Here the board after the move is only
imagined, as bitboards, and what every quiet move of a node shares (the
squares from which each kind of piece checks the enemy king, our pieces
whose move discovers a check) is worked out once.  `Position` offers these
as methods; tests check them against python-chess on random games.
"""
from __future__ import annotations

import functools
from typing import Callable

import chess
from chess import BB_DIAG_ATTACKS as _DIAG_ATTACKS, BB_DIAG_MASKS as _DIAG_MASKS
from chess import BB_FILE_ATTACKS as _FILE_ATTACKS, BB_FILE_MASKS as _FILE_MASKS
from chess import BB_KNIGHT_ATTACKS as _KNIGHT_ATTACKS, BB_PAWN_ATTACKS as _PAWN_ATTACKS
from chess import BB_RANK_ATTACKS as _RANK_ATTACKS, BB_RANK_MASKS as _RANK_MASKS, BB_RAYS as _RAYS

from search.movegen import slider_blockers
from search.types import Mailbox, mailbox_of


def gives_check(board: chess.Board, move: chess.Move, mailbox: Mailbox | None = None) -> bool:
    """`board.gives_check(move)` without playing the move, for any legal move.

    python-chess pushes and pops the move; here the board after the move
    is only imagined, as bitboards: the mover's pieces with `move`'s
    piece lifted and set down, then the enemy king's square is looked at
    from as each kind of piece, as in `in_check`.  Castling, en passant
    and promotions, rare among the quiet moves asked about, go to
    python-chess.  `mailbox`: the piece type on each square, if the caller
    keeps one (`search.position.Position.mailbox`).
    """
    frm, to = move.from_square, move.to_square
    if move.promotion:
        return board.gives_check(move)
    lifted = 1 << frm
    placed = 1 << to
    piece = board.piece_type_at(frm) if mailbox is None else mailbox[frm]
    if piece == chess.KING and board.is_castling(move) or (
            piece == chess.PAWN and to == board.ep_square and (frm - to) & 7):
        return board.gives_check(move)
    us = board.turn
    king = (board.kings & board.occupied_co[not us]).bit_length() - 1
    if king < 0:
        return False
    stay = board.occupied_co[us] & ~lifted  # our pieces that do not move
    occupied = board.occupied & ~lifted | placed
    if _KNIGHT_ATTACKS[king] & (board.knights & stay | (placed if piece == chess.KNIGHT else 0)):
        return True
    if _PAWN_ATTACKS[not us][king] & (board.pawns & stay | (placed if piece == chess.PAWN else 0)):
        return True
    queens = board.queens & stay | (placed if piece == chess.QUEEN else 0)
    diagonal = board.bishops & stay | (placed if piece == chess.BISHOP else 0)
    if _DIAG_ATTACKS[king][_DIAG_MASKS[king] & occupied] & (diagonal | queens):
        return True
    straight = board.rooks & stay | (placed if piece == chess.ROOK else 0)
    return bool((_RANK_ATTACKS[king][_RANK_MASKS[king] & occupied] | _FILE_ATTACKS[king][_FILE_MASKS[king] & occupied])
                & (straight | queens))


def check_squares(board: chess.Board, king: chess.Square) -> tuple[int, int, int, int]:
    """Where a pawn, a knight, a bishop and a rook of the side to move would attack the enemy king (on `king`) from.

    The sliders' squares are read on the board as it stands; a queen's are
    the bishop's and the rook's together.
    """
    occupied = board.occupied
    return (_PAWN_ATTACKS[not board.turn][king], _KNIGHT_ATTACKS[king],
            _DIAG_ATTACKS[king][_DIAG_MASKS[king] & occupied],
            _RANK_ATTACKS[king][_RANK_MASKS[king] & occupied] | _FILE_ATTACKS[king][_FILE_MASKS[king] & occupied])


def quiet_check_test(board: chess.Board, mailbox: Mailbox | None = None
                     ) -> tuple[Callable[[chess.Move], bool], chess.Bitboard]:
    """`gives_check` for the quiet moves of this node, with what they share worked out once.

    Quiet-move pruning asks it of every quiet move it would skip, often
    thirty at a node.  As Stockfish's check squares: the squares from
    which each kind of piece attacks the enemy king, read with the
    mover still on its square (a slider on the king's line would
    already give check, so a slider that lands on it came from off it),
    and our pieces whose move off their line to the king discovers a
    slider behind them.  Castling, en passant and promotions go to
    `gives_check`.  Also returned: the squares a move must land on to
    pass (castling by its rook's square, as python-chess generates it),
    so that a generator can be asked for those alone.  Valid until the
    next `push`.  `mailbox` as for `gives_check`.
    """
    us = board.turn
    king = (board.kings & board.occupied_co[not us]).bit_length() - 1
    if king < 0:
        return functools.partial(gives_check, board, mailbox=mailbox), chess.BB_ALL
    pawn, knight, diagonal, straight = check_squares(board, king)
    # Indexed by piece type: a king gives no check of its own.
    direct = (0, pawn, knight, diagonal, straight, diagonal | straight, 0)
    discoverers = slider_blockers(board, king, us) & board.occupied_co[us]
    lines = _RAYS[king]
    if mailbox is None:
        mailbox = mailbox_of(board)
    ep = board.ep_square

    def quiet_gives_check(move: chess.Move) -> bool:
        frm, to = move.from_square, move.to_square
        piece = mailbox[frm]
        if move.promotion or piece == chess.KING and board.is_castling(move) or (
                to == ep and piece == chess.PAWN and (frm - to) & 7):
            return board.gives_check(move)
        return bool((direct[piece] >> to) & 1 or (discoverers >> frm) & 1 and not (lines[frm] >> to) & 1)

    if discoverers:
        return quiet_gives_check, chess.BB_ALL
    return quiet_gives_check, pawn | knight | diagonal | straight | board.castling_rights & board.occupied_co[us]

