"""Static exchange evaluation (SEE): does a capture still win enough once every recapture on its square is made?

Both sides capture on the target square with their least valuable attacker,
and either may stop when going on would lose material; the result is the
material balance for the side making the first capture.  Sliders behind the
pieces that capture (x-rays) join in as the square's attackers are lifted.

The search only ever asks whether that balance reaches a bar (a capture that
loses material is ordered last, or skipped in quiescence), so `see_at_least`
answers that question and stops as soon as the answer is certain: once the
side that may stop is already on the right side of the bar, nothing later can
change it.  The full exchange value, computed by playing the exchange out on
board copies, is the reference it is tested against (tests/test_see.py).

Pins, checks and promotions on recapture are ignored: SEE is an estimate
for ordering captures and pruning losing ones in quiescence, not a search.
"""
from __future__ import annotations

import chess

from search.types import PIECE_VALUE, Mailbox

_KNIGHT_ATTACKS, _KING_ATTACKS, _PAWN_ATTACKS = chess.BB_KNIGHT_ATTACKS, chess.BB_KING_ATTACKS, chess.BB_PAWN_ATTACKS
_DIAG_ATTACKS, _DIAG_MASKS = chess.BB_DIAG_ATTACKS, chess.BB_DIAG_MASKS
_RANK_ATTACKS, _RANK_MASKS = chess.BB_RANK_ATTACKS, chess.BB_RANK_MASKS
_FILE_ATTACKS, _FILE_MASKS = chess.BB_FILE_ATTACKS, chess.BB_FILE_MASKS
_BB_SQUARES = chess.BB_SQUARES


def see_at_least(board: chess.Board, move: chess.Move, threshold: int = 0, mailbox: Mailbox | None = None) -> bool:
    """Whether `move` and the exchanges it starts win at least `threshold` centipawns for the side making it.

    `mailbox`: the piece type on each square, if the caller keeps one (the
    search's `Position.mailbox`); else the board is asked.

    The exchange is walked capture by capture.  Whoever is to recapture may
    instead stop, keeping the material as it stands: so when the first
    capturer's opponent is to move and the material already falls short of
    the bar, the answer is no; when the first capturer is to move and it
    already reaches the bar, yes; and a side with no attacker left must stop.
    This is the exchange's minimax, decided without the capture sequence
    that follows.  Hot path (captures of a cheaper piece, in ordering and in
    quiescence): bitboard arithmetic on python-chess's masks, no board copies.
    """
    frm, to = move.from_square, move.to_square
    if mailbox is None:
        attacker, victim = board.piece_type_at(frm), board.piece_type_at(to)
    else:
        attacker, victim = mailbox[frm], mailbox[to]
    us = board.turn
    occupied = board.occupied ^ _BB_SQUARES[frm]
    if victim is not None:
        material = PIECE_VALUE[victim]
    elif attacker == chess.PAWN and to == board.ep_square and (frm - to) & 7:
        occupied ^= _BB_SQUARES[to - 8 if us == chess.WHITE else to + 8]
        material = PIECE_VALUE[chess.PAWN]
    else:
        material = 0
    on_square = PIECE_VALUE[attacker]
    if move.promotion:
        material += PIECE_VALUE[move.promotion] - PIECE_VALUE[chess.PAWN]
        on_square = PIECE_VALUE[move.promotion]
    if material < threshold:
        return False  # the opponent can stop at once
    if material - on_square >= threshold:
        return True  # even losing the capturer, the bar is reached

    # The square's attackers of both colours, kept up to date as pieces
    # leave: the leapers' only lose the piece that left, the sliders' are
    # looked up again on the thinned board, so x-rays join in.  (python-chess's
    # `attackers_mask`, inlined: a call for each side at each step cost more.)
    by_type = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
    colours = board.occupied_co
    leapers = (_KNIGHT_ATTACKS[to] & board.knights | _KING_ATTACKS[to] & board.kings
               | _PAWN_ATTACKS[chess.WHITE][to] & board.pawns & colours[chess.BLACK]
               | _PAWN_ATTACKS[chess.BLACK][to] & board.pawns & colours[chess.WHITE])
    diagonal_sliders = board.bishops | board.queens
    straight_sliders = board.rooks | board.queens
    diagonal, diagonal_mask = _DIAG_ATTACKS[to], _DIAG_MASKS[to]
    rank, rank_mask, file, file_mask = _RANK_ATTACKS[to], _RANK_MASKS[to], _FILE_ATTACKS[to], _FILE_MASKS[to]
    side = not us
    while True:
        # `material` stands as if the exchange stopped here, and `side` may
        # go on: it is the opponent while the bar is reached, the first
        # capturer while it is not.
        attackers = (leapers | diagonal[diagonal_mask & occupied] & diagonal_sliders
                     | (rank[rank_mask & occupied] | file[file_mask & occupied]) & straight_sliders) & occupied
        mine = attackers & colours[side]
        if not mine:
            return side != us  # the side to recapture cannot: the material stands
        for index, pieces in enumerate(by_type):
            candidates = mine & pieces
            if candidates:
                break
        if index == chess.KING - 1 and attackers & colours[not side]:
            return side != us  # the king may not recapture into an attacked square
        capturer = PIECE_VALUE[index + 1]
        if side == us:
            material += on_square
            if material < threshold:
                return False  # the opponent stops here
            if material - capturer >= threshold:
                return True  # the bar holds even if this capturer is lost
        else:
            material -= on_square
            if material >= threshold:
                return True  # the first capturer stops here
            if material + capturer < threshold:
                return False  # short of the bar even if this capturer is taken back
        on_square = capturer
        occupied ^= candidates & -candidates
        side = not side
