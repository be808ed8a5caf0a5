"""Transposition table: a fixed-size array of entries indexed by Zobrist key.

A Python list of tuples, sized from the `Hash` option: the list never grows,
so memory stays bounded by the setting, and an index by `key & mask` is as
cheap as Python gets.  Replacement prefers deeper entries of the current search
and always replaces entries left over from earlier searches.
"""
from __future__ import annotations

from typing import NamedTuple

import chess

from search.position import MATE_BOUND

EXACT, LOWER, UPPER = 0, 1, 2

#: Rough bytes one filled slot costs in CPython (list slot + tuple + ints).
BYTES_PER_ENTRY = 160


class Entry(NamedTuple):
    key: int
    depth: int
    bound: int
    score: int
    move: chess.Move | None
    generation: int


def score_to_tt(score: int, ply: int) -> int:
    """Mate scores are stored relative to the node, not the root."""
    if score > MATE_BOUND:
        return score + ply
    if score < -MATE_BOUND:
        return score - ply
    return score


def score_from_tt(score: int, ply: int) -> int:
    if score > MATE_BOUND:
        return score - ply
    if score < -MATE_BOUND:
        return score + ply
    return score


class TranspositionTable:
    """Bounded table of search results keyed by 64-bit Zobrist keys."""

    def __init__(self, megabytes: int = 16) -> None:
        self.generation = 0
        self.resize(megabytes)

    def resize(self, megabytes: int) -> None:
        entries = max(1024, megabytes * 1024 * 1024 // BYTES_PER_ENTRY)
        size = 1 << (entries.bit_length() - 1)  # power of two for masking
        self.mask = size - 1
        self.slots: list[Entry | None] = [None] * size
        self.used = 0

    def clear(self) -> None:
        self.slots = [None] * (self.mask + 1)
        self.used = 0
        self.generation = 0

    def new_search(self) -> None:
        self.generation += 1

    def probe(self, key: int) -> Entry | None:
        entry = self.slots[key & self.mask]
        if entry is not None and entry.key == key:
            return entry
        return None

    def store(self, key: int, depth: int, bound: int, score: int, move: chess.Move | None, ply: int) -> None:
        index = key & self.mask
        old = self.slots[index]
        if old is None:
            self.used += 1
        elif old.generation == self.generation and old.depth > depth and old.key != key:
            return  # keep the deeper result of this search
        elif old.key == key and move is None:
            move = old.move  # an upper bound has no move: keep the one we knew
        self.slots[index] = Entry(key, depth, bound, score_to_tt(score, ply), move, self.generation)

    def hashfull(self) -> int:
        """Permille of slots in use, as UCI's `hashfull` wants."""
        return self.used * 1000 // (self.mask + 1)
