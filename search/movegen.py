"""Legal move generation outside check, inlined: python-chess's moves, in python-chess's order, for less.

python-chess generates legal moves through three layers of generators
(`generate_legal_moves`, `generate_pseudo_legal_moves`, `scan_reversed`)
and asks `_is_safe` of every move; at a search's every node that was about
a fifth of the time (`python -m cProfile -m uci_engine bench 4`).  Here,
for a side that is not in check, one function walks the bitboards with
local variables, computes the pinned pieces once, and tests a move only
where it can be illegal: a pinned piece leaving its line, or the king
stepping onto an attacked square.

The moves come in exactly python-chess's order (pieces by descending
square, then castling, pawn captures, single and double pushes, en
passant), so that a search's tree, which breaks ordering ties by
generation order, is the same with either generator; tests compare the two
move for move.  In check, `evasions` gives python-chess's evasions, in its
order, from the same loops: king steps, then (one checker) the moves that
take it or block its line.  Hot path: flat functions, written for speed,
not for reading.
"""
from __future__ import annotations

import chess

_Move = chess.Move
_QUEEN, _ROOK, _BISHOP, _KNIGHT = chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT
_KNIGHT_ATTACKS = chess.BB_KNIGHT_ATTACKS
_KING_ATTACKS = chess.BB_KING_ATTACKS
_PAWN_ATTACKS = chess.BB_PAWN_ATTACKS
_DIAG_ATTACKS, _DIAG_MASKS = chess.BB_DIAG_ATTACKS, chess.BB_DIAG_MASKS
_RANK_ATTACKS, _RANK_MASKS = chess.BB_RANK_ATTACKS, chess.BB_RANK_MASKS
_FILE_ATTACKS, _FILE_MASKS = chess.BB_FILE_ATTACKS, chess.BB_FILE_MASKS
_RAYS = chess.BB_RAYS
_BETWEEN = chess.between
_ALL = chess.BB_ALL
_BACKRANKS = chess.BB_RANK_1 | chess.BB_RANK_8
#: Every non-promotion move, made once: `MOVES[from][to]`.  A table lookup
#: costs a tenth of building a `chess.Move`, which the generator did for
#: every move of every node.  (Moves are never mutated, so sharing is safe.)
MOVES: list[list[chess.Move]] = [[_Move(frm, to) for to in chess.SQUARES] for frm in chess.SQUARES]


def pinned(board: chess.Board, king: chess.Square) -> chess.Bitboard:
    """The side to move's pieces that stand alone between `king` and an enemy slider (python-chess's `_slider_blockers`)."""
    return slider_blockers(board, king, not board.turn) & board.occupied_co[board.turn]


def slider_blockers(board: chess.Board, king: chess.Square, snipers: chess.Color) -> chess.Bitboard:
    """Pieces of either colour that stand alone between `king` and a slider of colour `snipers`.

    Against the enemy's sliders, the side to move's are pinned; against the
    side to move's own, they are the pieces whose move can discover check.
    """
    side = board.occupied_co[snipers]
    straight = (board.rooks | board.queens) & side
    diagonal = (board.bishops | board.queens) & side
    lines = (_RANK_ATTACKS[king][0] | _FILE_ATTACKS[king][0]) & straight | _DIAG_ATTACKS[king][0] & diagonal
    occupied = board.occupied
    blockers = 0
    while lines:
        sniper = lines.bit_length() - 1
        lines ^= 1 << sniper
        between = _RAYS[king][sniper] & ((_ALL << king) ^ (_ALL << sniper))
        between &= between - 1
        between &= occupied
        if between and not between & (between - 1):
            blockers |= between
    return blockers


def legal_moves(board: chess.Board, from_mask: chess.Bitboard = _ALL,
                to_mask: chess.Bitboard = _ALL) -> list[chess.Move]:
    """`list(board.generate_legal_moves(from_mask, to_mask))` for a side not in check (the caller knows it is not).

    Hot path: inlined loops over the bitboards.
    """
    us = board.turn
    ours = board.occupied_co[us]
    theirs = board.occupied_co[not us]
    occupied = board.occupied
    kings = board.kings
    king_bb = kings & ours
    king = king_bb.bit_length() - 1
    pins = pinned(board, king) if king >= 0 else 0
    rays = _RAYS[king] if king >= 0 else None
    moves: list[chess.Move] = []
    append = moves.append
    knights, bishops, rooks, queens = board.knights, board.bishops, board.rooks, board.queens
    targets_all = ~ours & to_mask

    pieces = ours & ~board.pawns & from_mask
    while pieces:
        frm = pieces.bit_length() - 1
        bit = 1 << frm
        pieces ^= bit
        if bit & knights:
            if bit & pins:
                continue  # a pinned knight never moves
            targets = _KNIGHT_ATTACKS[frm] & targets_all
        elif bit & kings:
            targets = _KING_ATTACKS[frm] & targets_all
            if targets:
                # `board.attackers_mask(not us, to)`, inlined with the cheap
                # pieces first: the side is not in check, so no slider sees
                # through the king to a square behind it.
                row = MOVES[frm]
                pawn_attacks = _PAWN_ATTACKS[us]
                enemy_pawns = board.pawns & theirs
                enemy_knights = knights & theirs
                enemy_kings = kings & theirs
                straight = (rooks | queens) & theirs
                diagonal = (bishops | queens) & theirs
                while targets:
                    to = targets.bit_length() - 1
                    targets ^= 1 << to
                    if (pawn_attacks[to] & enemy_pawns or _KNIGHT_ATTACKS[to] & enemy_knights
                            or _KING_ATTACKS[to] & enemy_kings
                            or diagonal and _DIAG_ATTACKS[to][_DIAG_MASKS[to] & occupied] & diagonal
                            or straight and (_RANK_ATTACKS[to][_RANK_MASKS[to] & occupied]
                                             | _FILE_ATTACKS[to][_FILE_MASKS[to] & occupied]) & straight):
                        continue
                    append(row[to])
            continue
        else:
            targets = 0
            if bit & (bishops | queens):
                targets = _DIAG_ATTACKS[frm][_DIAG_MASKS[frm] & occupied]
            if bit & (rooks | queens):
                targets |= _RANK_ATTACKS[frm][_RANK_MASKS[frm] & occupied] | _FILE_ATTACKS[frm][_FILE_MASKS[frm] & occupied]
            targets &= targets_all
            if bit & pins:
                targets &= rays[frm]
        row = MOVES[frm]
        while targets:
            to = targets.bit_length() - 1
            targets ^= 1 << to
            append(row[to])

    if from_mask & king_bb and board.castling_rights & ours:
        moves.extend(board.generate_castling_moves(from_mask, to_mask))

    pawns = board.pawns & ours & from_mask
    if not pawns:
        return moves
    capture_mask = theirs & to_mask
    if capture_mask:
        pawn_attacks = _PAWN_ATTACKS[us]
        # Only pawns diagonally behind a target, found set-wise, are looked at.
        if us:
            capturers = pawns & ((capture_mask >> 7) & ~chess.BB_FILE_A | (capture_mask >> 9) & ~chess.BB_FILE_H)
        else:
            capturers = pawns & ((capture_mask << 7) & ~chess.BB_FILE_H | (capture_mask << 9) & ~chess.BB_FILE_A)
        while capturers:
            frm = capturers.bit_length() - 1
            bit = 1 << frm
            capturers ^= bit
            targets = pawn_attacks[frm] & capture_mask
            if targets and bit & pins:
                targets &= rays[frm]
            while targets:
                to = targets.bit_length() - 1
                targets ^= 1 << to
                if (1 << to) & _BACKRANKS:
                    moves += _promotions(frm, to)
                else:
                    append(MOVES[frm][to])

    if us:
        single = pawns << 8 & ~occupied
        double = single << 8 & ~occupied & (chess.BB_RANK_3 | chess.BB_RANK_4)
        step = -8
    else:
        single = pawns >> 8 & ~occupied
        double = single >> 8 & ~occupied & (chess.BB_RANK_6 | chess.BB_RANK_5)
        step = 8
    single &= to_mask
    double &= to_mask
    while single:
        to = single.bit_length() - 1
        single ^= 1 << to
        frm = to + step
        if (1 << frm) & pins and not rays[frm] & (1 << to):
            continue
        if (1 << to) & _BACKRANKS:
            moves += _promotions(frm, to)
        else:
            append(MOVES[frm][to])
    while double:
        to = double.bit_length() - 1
        double ^= 1 << to
        frm = to + 2 * step
        if (1 << frm) & pins and not rays[frm] & (1 << to):
            continue
        append(MOVES[frm][to])

    ep = board.ep_square
    if ep is not None and (to_mask >> ep) & 1:  # (captures ask with the enemy's pieces only: never the empty ep square)
        moves.extend(board.generate_legal_ep(from_mask, to_mask))
    return moves


def evasions(board: chess.Board) -> list[chess.Move]:
    """`list(board.generate_legal_moves())` for a side in check (the caller knows it is), on a plain board.

    python-chess's order: the king's steps by descending square, then, with
    a single checker, every other piece's moves onto the checker or the
    squares between it and the king, as `legal_moves` makes them, then an en
    passant capture of a checking pawn.  A pinned piece never evades a
    check (its line and the check's meet only at the king), which
    `legal_moves`'s pin rule already gives.
    """
    us = board.turn
    them = not us
    ours = board.occupied_co[us]
    king = (board.kings & ours).bit_length() - 1
    checkers = board.attackers_mask(them, king)
    # Squares on a slider's line through the king, beyond it too: the king
    # cannot step back along the line it is checked on.
    attacked = 0
    sliders = checkers & (board.bishops | board.rooks | board.queens)
    while sliders:
        checker = sliders.bit_length() - 1
        sliders ^= 1 << checker
        attacked |= _RAYS[king][checker] & ~(1 << checker)
    moves: list[chess.Move] = []
    row = MOVES[king]
    steps = _KING_ATTACKS[king] & ~ours & ~attacked
    while steps:
        to = steps.bit_length() - 1
        steps ^= 1 << to
        if not board.attackers_mask(them, to):
            moves.append(row[to])
    checker = checkers.bit_length() - 1
    if checkers == 1 << checker:  # one checker: take it or block
        target = _BETWEEN(king, checker) | checkers
        moves += legal_moves(board, ~board.kings, target)
        ep = board.ep_square
        if ep is not None and not (1 << ep) & target and ep + (-8 if us else 8) == checker:
            moves.extend(board.generate_legal_ep())
    return moves


def _promotions(frm: chess.Square, to: chess.Square) -> list[chess.Move]:
    """A pawn's four promotions on one square, in python-chess's order (rare: a call is affordable)."""
    return [_Move(frm, to, _QUEEN), _Move(frm, to, _ROOK), _Move(frm, to, _BISHOP), _Move(frm, to, _KNIGHT)]


def promoting_pawns(board: chess.Board) -> chess.Bitboard:
    """The side to move's pawns one step from promotion."""
    return board.pawns & board.occupied_co[board.turn] & (
        chess.BB_RANK_7 if board.turn == chess.WHITE else chess.BB_RANK_2
    )


def legal_captures(board: chess.Board) -> list[chess.Move]:
    """`list(board.generate_legal_captures())` for a side not in check."""
    moves = legal_moves(board, _ALL, board.occupied_co[not board.turn])
    if board.ep_square is not None:
        moves.extend(board.generate_legal_ep())
    return moves
