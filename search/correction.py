"""Correction history: how far the static evaluation has been missing, by pawn structure.

A net misjudges some kinds of position consistently (a blocked centre, a
passed pawn it underrates), and the search finds out, node after node, by how
much.  The table keeps, for each side to move and pawn structure, a running
average of (search result - static evaluation) from the nodes searched so
far; the static evaluation that pruning reads (reverse futility, null move,
futility, quiescence's stand-pat) is corrected by it.  Stockfish's idea; the
table learns within a game and is emptied with the transposition table.

Only the selective parts read it: the exact search (`Features.exact`) never
consults a static evaluation, so alpha-beta still returns minimax there.
"""
from __future__ import annotations

import chess

#: Entries per side to move: a prime, the modulus of the structure's index.
ENTRIES = 16381
#: Entries hold centipawns times GRAIN, so that small steps of the average are kept.
GRAIN = 256
#: A node's miss counts at most this many centipawns (a tactic is not a structure's fault).
MAX_MISS = 400
#: The correction stays within this many centipawns.
MAX_CORRECTION = 100
#: Out of 256: how much one node moves its entry, by depth (deeper results are surer), at most.
MAX_WEIGHT = 16


def pawn_index(board: chess.Board) -> int:
    """The table index of the board's pawn structure: both colours' pawns, mixed by one multiplication.

    Written out rather than Python's `hash` of the two: the same on every
    build and version, so a search's tree (and `bench`) is too.
    """
    pawns = board.pawns
    white = pawns & board.occupied_co[chess.WHITE]
    return (white * 0x9E3779B97F4A7C15 + (pawns ^ white)) % ENTRIES


class CorrectionHistory:
    """Per side to move and pawn structure, the running miss of the static evaluation (in GRAIN units)."""

    __slots__ = ("tables",)

    def __init__(self) -> None:
        self.tables: list[list[int]] = [[0] * ENTRIES, [0] * ENTRIES]

    def clear(self) -> None:
        for table in self.tables:
            table[:] = [0] * ENTRIES

    def correction(self, turn: chess.Color, index: int) -> int:
        """Centipawns to add to the static evaluation of the side to move `turn` at pawn structure `index`."""
        return (self.tables[turn][index] + GRAIN // 2) // GRAIN  # (rounded: a floor would lean to the negative)

    def update(self, turn: chess.Color, index: int, miss: int, depth: int) -> None:
        """Fold a node's `miss` (search result less raw static evaluation, centipawns) into its entry."""
        miss = max(-MAX_MISS, min(MAX_MISS, miss))
        weight = min(depth + 1, MAX_WEIGHT)
        table = self.tables[turn]
        total = table[index] * (256 - weight) + miss * GRAIN * weight
        # Rounded half away from zero, alike on both sides (a floor would drift to the negative).
        entry = (total + 128) // 256 if total >= 0 else -((128 - total) // 256)
        limit = MAX_CORRECTION * GRAIN
        table[index] = max(-limit, min(limit, entry))
