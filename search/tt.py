"""Transposition table: fixed-size arrays of packed integers indexed by Zobrist key.

Two parallel Python lists hold, per slot, the 64-bit key and one integer that
packs depth, bound, score, move and search generation.  Plain ints are the
most compact thing CPython can store (a tuple plus a `chess.Move` per entry
cost about four times as much), and the lists never grow, so memory stays
within the `Hash` setting.  Replacement prefers deeper entries of the current
search and always replaces entries left over from earlier searches.
"""
from __future__ import annotations

import chess

from search.movegen import MOVES
from search.types import TB_WIN_BOUND

#: The `Hash` setting (MB) when none is given: the UCI option's default, and
#: the command line's and `bench`'s.
DEFAULT_HASH_MB = 16
#: The largest table the `Hash` option and the commands' --hash accept.
MAX_HASH_MB = 1024
#: Bytes one slot costs when filled: two list pointers (16) plus two
#: 64-bit-range ints (36 each), measured with sys.getsizeof.
BYTES_PER_ENTRY = 88

# Packed layout of a slot's data, low bits first: depth 8 bits, bound 2,
# score + 65536 17, move code 16, generation 8 (`decode` reads it back).
_BOUND_SHIFT, _SCORE_SHIFT, _MOVE_SHIFT, _GEN_SHIFT = 8, 10, 27, 43
_SCORE_OFFSET = 1 << 16


def score_to_tt(score: int, ply: int) -> int:
    """Mate and tablebase-win scores are stored relative to the node, not the root.

    Both count plies from the root (MATE - ply, TB_WIN - ply); a transposition
    reached at another ply must see the same distance from itself.
    """
    if score > TB_WIN_BOUND:
        return score + ply
    if score < -TB_WIN_BOUND:
        return score - ply
    return score


def score_from_tt(score: int, ply: int) -> int:
    if score > TB_WIN_BOUND:
        return score - ply
    if score < -TB_WIN_BOUND:
        return score + ply
    return score


def encode_move(move: chess.Move | None) -> int:
    """16 bits: from, to, promotion piece type; 0 means no move (a1a1 is impossible)."""
    if move is None:
        return 0
    return move.from_square | move.to_square << 6 | (move.promotion or 0) << 12


def decode_move(code: int) -> chess.Move | None:
    if code == 0:
        return None
    if code < 4096:
        return MOVES[code & 63][code >> 6]
    return chess.Move(code & 63, (code >> 6) & 63, code >> 12)


def decode(data: int) -> tuple[int, int, int, int]:
    """A slot's packed data (`TranspositionTable.probe_data`) as (depth, bound, score, move code).

    The score is node-relative for mates and tablebase wins: pass it to
    `score_from_tt`.  The move code is 0 for none (`decode_move` makes it a
    move; the empty slot's data, 0, has move code 0).

    `AlphaBeta.alphabeta` does the same inline with literal shifts: calling
    this at every node cost 2.5 % of `bench`'s time (user CPU, 4.80 s against
    4.93 s, three runs each); tests/test_tt.py checks the search reads
    entries as this function does.
    """
    return (data & 255, (data >> _BOUND_SHIFT) & 3, ((data >> _SCORE_SHIFT) & 0x1FFFF) - _SCORE_OFFSET,
            (data >> _MOVE_SHIFT) & 0xFFFF)


class TranspositionTable:
    """Bounded table of search results keyed by 64-bit Zobrist keys."""

    def __init__(self, megabytes: int = DEFAULT_HASH_MB) -> None:
        self.generation = 0
        self.resize(megabytes)

    def resize(self, megabytes: int) -> None:
        entries = max(1024, megabytes * 1024 * 1024 // BYTES_PER_ENTRY)
        self._allocate(1 << (entries.bit_length() - 1))  # power of two for masking

    def clear(self) -> None:
        self._allocate(self.mask + 1)
        self.generation = 0

    def _allocate(self, size: int) -> None:
        """Empty arrays of `size` slots; if memory runs out (MemoryError) the table is left as it was."""
        keys: list[int] = [0] * size
        data: list[int] = [0] * size
        self.keys, self.data, self.mask, self.used = keys, data, size - 1, 0

    def new_search(self) -> None:
        self.generation = (self.generation + 1) & 255

    def probe_data(self, key: int) -> int:
        """The packed data stored for `key`, or 0 (read it with `decode`)."""
        index = key & self.mask
        return self.data[index] if self.keys[index] == key else 0

    def store(self, key: int, depth: int, bound: int, score: int, move: chess.Move | None, ply: int) -> None:
        index = key & self.mask
        old = self.data[index]
        move_code = encode_move(move)
        if not old:
            self.used += 1
        elif self.keys[index] != key:
            if old >> _GEN_SHIFT == self.generation and old & 255 > depth:
                return  # keep the deeper result of this search
        elif move is None:
            move_code = decode(old)[3]  # an upper bound has no move: keep the one we knew
        self.keys[index] = key
        self.data[index] = self._pack(depth, bound, score, move_code, ply)

    def _pack(self, depth: int, bound: int, score: int, move_code: int, ply: int) -> int:
        # A filled slot's data is never 0: the score field (score + 65536) is not.
        return (min(max(depth, 0), 255) | bound << _BOUND_SHIFT
                | (score_to_tt(score, ply) + _SCORE_OFFSET) << _SCORE_SHIFT
                | move_code << _MOVE_SHIFT | self.generation << _GEN_SHIFT)

    def hashfull(self) -> int:
        """Permille of slots in use, as UCI's `hashfull` wants."""
        return self.used * 1000 // (self.mask + 1)
