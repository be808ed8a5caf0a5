"""Static exchange evaluation (SEE): what a capture wins once every recapture on its square is made.

Both sides capture on the target square with their least valuable attacker,
and either may stop when going on would lose material; the result is the
material balance for the side making the first capture.  Sliders behind the
pieces that capture (x-rays) join in as the square's attackers are lifted.

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


def see(board: chess.Board, move: chess.Move, mailbox: Mailbox | None = None) -> int:
    """Material won (centipawns, negative when lost) by `move` and the exchanges it starts.

    `mailbox`: the piece type on each square, if the caller keeps one (the
    search's `Position.mailbox`); else the board is asked.  Hot path
    (called for captures of a cheaper piece in quiescence): bitboard
    arithmetic on python-chess's masks, no board copies.
    """
    frm, to = move.from_square, move.to_square
    if mailbox is None:
        attacker, victim = board.piece_type_at(frm), board.piece_type_at(to)
    else:
        attacker, victim = mailbox[frm], mailbox[to]
    occupied = board.occupied ^ chess.BB_SQUARES[frm]
    if victim is None:
        if attacker == chess.PAWN and to == board.ep_square and (frm - to) & 7:
            occupied ^= chess.BB_SQUARES[to - 8 if board.turn == chess.WHITE else to + 8]
            gain = [PIECE_VALUE[chess.PAWN]]
        else:
            gain = [0]
    else:
        gain = [PIECE_VALUE[victim]]
    on_square = PIECE_VALUE[attacker]
    if move.promotion:
        gain[0] += PIECE_VALUE[move.promotion] - PIECE_VALUE[chess.PAWN]
        on_square = PIECE_VALUE[move.promotion]

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
    side = not board.turn
    while True:
        attackers = (leapers | diagonal[diagonal_mask & occupied] & diagonal_sliders
                     | (rank[rank_mask & occupied] | file[file_mask & occupied]) & straight_sliders) & occupied
        mine = attackers & colours[side]
        if not mine:
            break
        for index, pieces in enumerate(by_type):
            candidates = mine & pieces
            if candidates:
                break
        if index == chess.KING - 1 and attackers & colours[not side]:
            break  # the king may not recapture into an attacked square
        gain.append(on_square - gain[-1])
        on_square = PIECE_VALUE[index + 1]
        occupied ^= candidates & -candidates
        side = not side
    # Each side recaptures only if that beats stopping: negamax back to the first capture.
    for depth in range(len(gain) - 1, 0, -1):
        gain[depth - 1] = -max(-gain[depth - 1], gain[depth])
    return gain[0]
