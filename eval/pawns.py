"""Pawn structure: passed, isolated, doubled and connected pawns.

Pawn structure changes rarely during a search (only pawn moves and captures
of pawns change it), so its score is computed once per pair of pawn
bitboards and cached; a typical search sees a few thousand structures and
millions of evaluations.  What depends on the kings — how far each king
stands from a passed pawn's path, which decides pawn endings — is added
per evaluation, for passed pawns only.  The weights are in eval/weights.py,
with the other evaluation weights the Texel tuner fits.
"""
from __future__ import annotations

from typing import NamedTuple

import chess

from eval.weights import CONNECTED, DOUBLED, ISOLATED, KING_PROXIMITY, PASSED_EG, PASSED_MG

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
    counts = structure_counts(white_pawns, black_pawns)
    passed = counts.passed
    mg = (sum(PASSED_MG[rank] * passed[rank] for rank in range(8)) + ISOLATED[0] * counts.isolated
          + DOUBLED[0] * counts.doubled + CONNECTED[0] * counts.connected)
    eg = (sum(PASSED_EG[rank] * passed[rank] for rank in range(8)) + ISOLATED[1] * counts.isolated
          + DOUBLED[1] * counts.doubled + CONNECTED[1] * counts.connected)
    return mg, eg, counts.white_passed, counts.black_passed


class StructureCounts(NamedTuple):
    """How often each pawn-structure term occurs, White's count minus Black's.

    The score is these counts times the weights; the Texel tuner
    (training/tuning_features.py) uses the counts directly as coefficients.
    """

    passed: list[int]  # by the pawn's rank from its own side
    isolated: int
    doubled: int
    connected: int
    white_passed: int  # bitboards of the passed pawns
    black_passed: int


def structure_counts(white_pawns: int, black_pawns: int) -> StructureCounts:
    """Count the pawn-structure terms of both sides (not cached: see `structure`)."""
    passed_by_rank = [0] * 8
    isolated = doubled = connected = 0
    passed = [0, 0]
    for color, ours, theirs, sign in ((chess.WHITE, white_pawns, black_pawns, 1),
                                      (chess.BLACK, black_pawns, white_pawns, -1)):
        span = PASSED_SPAN[color]
        defended_by = chess.BB_PAWN_ATTACKS[not color]
        for square in chess.scan_forward(ours):
            file = square & 7
            if not ours & _ADJACENT_FILES[file]:
                isolated += sign
            blocked_by_own = ours & _FILES[file] & span[square]
            if blocked_by_own:
                # Doubled: each pawn with a friendly pawn in front of it.
                doubled += sign
            neighbours = ours & _ADJACENT_FILES[file]
            if defended_by[square] & ours or neighbours & chess.BB_RANKS[square >> 3]:
                connected += sign
            if not span[square] & theirs and not blocked_by_own:
                passed[color] |= chess.BB_SQUARES[square]
                relative_rank = (square >> 3) if color == chess.WHITE else 7 - (square >> 3)
                passed_by_rank[relative_rank] += sign
    return StructureCounts(passed_by_rank, isolated, doubled, connected, passed[chess.WHITE], passed[chess.BLACK])


def king_proximity(board: chess.Board, white_passed: int, black_passed: int) -> int:
    """Endgame term: kings near the path of passed pawns (White minus Black)."""
    far, near = king_proximity_counts(board, white_passed, black_passed)
    return KING_PROXIMITY[0] * far - KING_PROXIMITY[1] * near


def king_proximity_counts(board: chess.Board, white_passed: int, black_passed: int) -> tuple[int, int]:
    """(enemy king distance, own king distance) to passed pawns' front squares, rank-weighted, White minus Black.

    Only passed pawns from the fourth rank on count, each with weight
    relative rank - 2; `king_proximity` rewards the first and penalises the
    second.
    """
    far = near = 0
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
            weight = sign * (relative_rank - 2)
            far += weight * chess.square_distance(their_king, front)
            near += weight * chess.square_distance(our_king, front)
    return far, near
