"""Pawn structure: passed, isolated, doubled and connected pawns.

Pawn structure changes rarely during a search (only pawn moves and captures
of pawns change it), so its score is computed once per pair of pawn
bitboards and cached; a typical search sees a few thousand structures and
millions of evaluations.  What depends on the kings — how far each king
stands from a passed pawn's path, which decides pawn endings — is added
per evaluation, for passed pawns only.
"""
from __future__ import annotations

import chess

# (mg, eg) in centipawns; indexed by the pawn's rank from its own side (0..7).
PASSED_MG = [0, 5, 10, 15, 30, 50, 80, 0]
PASSED_EG = [0, 10, 15, 30, 55, 90, 140, 0]
ISOLATED = (-10, -15)
DOUBLED = (-10, -25)
#: A pawn defended by a pawn, or side by side with one (a phalanx).
CONNECTED = (8, 6)
#: Endgame bonus per square of distance of the enemy king from the square in
#: front of a passed pawn, minus the same for our own king; scaled by rank.
KING_PROXIMITY = (5, 2)

_FILES = [chess.BB_FILES[file] for file in range(8)]
_ADJACENT_FILES = [(_FILES[file - 1] if file > 0 else 0) | (_FILES[file + 1] if file < 7 else 0) for file in range(8)]


def _forward_mask(color: chess.Color, square: int) -> int:
    """Squares strictly ahead of `square` on its own and the adjacent files."""
    rank = chess.square_rank(square)
    if color == chess.WHITE:
        ahead = ~((1 << (8 * (rank + 1))) - 1) & chess.BB_ALL
    else:
        ahead = (1 << (8 * rank)) - 1
    file = chess.square_file(square)
    return ahead & (_FILES[file] | _ADJACENT_FILES[file])


#: PASSED_SPAN[color][square]: enemy pawns here stop a pawn on square from being passed.
PASSED_SPAN = [[_forward_mask(color, square) for square in chess.SQUARES] for color in (chess.BLACK, chess.WHITE)]

_cache: dict[tuple[int, int], tuple[int, int, int, int]] = {}
_CACHE_LIMIT = 1 << 16


def structure(white_pawns: int, black_pawns: int) -> tuple[int, int, int, int]:
    """(mg, eg, white passed pawns, black passed pawns), scores White minus Black; cached."""
    key = (white_pawns, black_pawns)
    cached = _cache.get(key)
    if cached is None:
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        cached = _cache[key] = _structure(white_pawns, black_pawns)
    return cached


def _structure(white_pawns: int, black_pawns: int) -> tuple[int, int, int, int]:
    mg = eg = 0
    passed = [0, 0]
    for color, ours, theirs, sign in ((chess.WHITE, white_pawns, black_pawns, 1),
                                      (chess.BLACK, black_pawns, white_pawns, -1)):
        span = PASSED_SPAN[color]
        defended_by = chess.BB_PAWN_ATTACKS[not color]
        for square in chess.scan_forward(ours):
            file = square & 7
            relative_rank = (square >> 3) if color == chess.WHITE else 7 - (square >> 3)
            if not ours & _ADJACENT_FILES[file]:
                mg += sign * ISOLATED[0]
                eg += sign * ISOLATED[1]
            blocked_by_own = ours & _FILES[file] & span[square]
            if blocked_by_own:
                # Doubled: each pawn with a friendly pawn in front of it.
                mg += sign * DOUBLED[0]
                eg += sign * DOUBLED[1]
            neighbours = ours & _ADJACENT_FILES[file]
            if defended_by[square] & ours or neighbours & chess.BB_RANKS[square >> 3]:
                mg += sign * CONNECTED[0]
                eg += sign * CONNECTED[1]
            if not span[square] & theirs and not blocked_by_own:
                passed[color] |= chess.BB_SQUARES[square]
                mg += sign * PASSED_MG[relative_rank]
                eg += sign * PASSED_EG[relative_rank]
    return mg, eg, passed[chess.WHITE], passed[chess.BLACK]


def king_proximity(board: chess.Board, white_passed: int, black_passed: int) -> int:
    """Endgame term: kings near the path of passed pawns (White minus Black)."""
    score = 0
    for color, passers, sign in ((chess.WHITE, white_passed, 1), (chess.BLACK, black_passed, -1)):
        if not passers:
            continue
        our_king = board.king(color)
        their_king = board.king(not color)
        if our_king is None or their_king is None:
            continue
        step = 8 if color == chess.WHITE else -8
        for square in chess.scan_forward(passers):
            relative_rank = (square >> 3) if color == chess.WHITE else 7 - (square >> 3)
            if relative_rank < 3:
                continue
            front = square + step
            weight = relative_rank - 2
            score += sign * weight * (KING_PROXIMITY[0] * chess.square_distance(their_king, front)
                                      - KING_PROXIMITY[1] * chess.square_distance(our_king, front))
    return score
