"""A transposition table in shared memory, for searches running in several processes.

Lazy SMP (issue 15) lets every process search the same root and share what it
learns through one table.  Python processes share no objects, so the table is
a flat block of 64-bit words in `multiprocessing.shared_memory`: two words
per slot, `key ^ data` and `data`, written without locks.  A reader accepts a
slot only if the two words xor back to its key, so a slot torn by two
processes writing at once (one's key word, the other's data word) reads as a
miss instead of a wrong entry: the classic lockless scheme of Crafty and
Stockfish.  A 64-bit word itself is written in one store on the machines
CPython runs on; only the pair can tear.

The packing of `data` and the replacement rule are those of
`search.tt.TranspositionTable`, so the search code cannot tell the two apart.
A slot costs 16 bytes here (88 in the list-based table), so the same `Hash`
holds five times the entries.
"""
from __future__ import annotations

import sys
from multiprocessing import resource_tracker, shared_memory

import chess

from search.tt import _GEN_SHIFT, DEFAULT_HASH_MB, TranspositionTable, decode, encode_move

BYTES_PER_SLOT = 16
#: Slots `hashfull` samples, as Stockfish does: counting every slot would
#: cost a pass over the whole table on each `info` line.
HASHFULL_SAMPLE = 1000
CLEAR_STEP = 1 << 20


def _attach(name: str) -> shared_memory.SharedMemory:
    """Open a block another process made, without taking ownership of it.

    Before Python 3.13 every process that opens a block registers it with the
    resource tracker, which then unlinks it when *that* process exits, under
    the feet of the others.  Only the creator may own it.
    """
    if sys.version_info >= (3, 13):
        return shared_memory.SharedMemory(name=name, track=False)  # type: ignore[call-arg]
    register = resource_tracker.register
    resource_tracker.register = lambda *args, **kwargs: None  # type: ignore[assignment]
    try:
        return shared_memory.SharedMemory(name=name)
    finally:
        resource_tracker.register = register  # type: ignore[assignment]


class SharedTranspositionTable(TranspositionTable):
    """The table of `search.tt` over shared memory: one creator, any number of attached processes.

    The creator (the engine's main process) sizes, clears and finally unlinks
    the block; helpers `attach` by name.  `generation` stays per process: the
    main process sends its own with every `go`.
    """

    def __init__(self, megabytes: float = DEFAULT_HASH_MB, name: str | None = None) -> None:
        self._shm: shared_memory.SharedMemory | None = None
        self.owner = name is None
        self.generation = 0
        if name is None:
            self.resize(megabytes)
        else:
            self._map(_attach(name))

    @property
    def name(self) -> str:
        assert self._shm is not None
        return self._shm.name

    def resize(self, megabytes: float) -> None:
        """A new block of the largest power-of-two slot count within `megabytes` (owner only)."""
        if not self.owner:
            raise RuntimeError("only the process that made the table resizes it")
        slots = max(1024, int(megabytes * 1024 * 1024) // BYTES_PER_SLOT)
        slots = 1 << (slots.bit_length() - 1)
        block = shared_memory.SharedMemory(create=True, size=slots * BYTES_PER_SLOT)  # may fail: keep the old
        self.close()
        self._map(block)
        self.clear()

    def _map(self, shm: shared_memory.SharedMemory) -> None:
        self._shm = shm
        self.words = shm.buf.cast("Q")
        slots = len(self.words) // 2
        self.mask = slots - 1
        if slots & self.mask:
            raise ValueError(f"shared table {shm.name} has {slots} slots, not a power of two")

    def clear(self) -> None:
        """Empty every slot, for every process attached."""
        assert self._shm is not None
        block, size = self._shm.buf, len(self.words) * 8
        zeros = bytes(min(size, CLEAR_STEP))  # in steps: a 1 GB table needs no 1 GB of zeros
        for start in range(0, size, CLEAR_STEP):
            end = min(start + CLEAR_STEP, size)
            block[start:end] = zeros[:end - start]
        self.generation = 0

    def probe_data(self, key: int) -> int:
        """The packed data stored for `key`, or 0; a torn slot is a miss."""
        words = self.words
        index = (key & self.mask) << 1
        data = words[index + 1]
        return data if words[index] ^ data == key else 0

    def store(self, key: int, depth: int, bound: int, score: int, move: chess.Move | None, ply: int) -> None:
        # The replacement rule of TranspositionTable.store, over the xor-ed pair.
        words = self.words
        index = (key & self.mask) << 1
        old = words[index + 1]
        old_key = words[index] ^ old
        move_code = encode_move(move)
        if old:
            if old_key != key:
                if old >> _GEN_SHIFT == self.generation and old & 255 > depth:
                    return  # keep the deeper result of this search
            elif move is None:
                move_code = decode(old)[3]  # an upper bound has no move: keep the one we knew
        data = self._pack(depth, bound, score, move_code, ply)
        words[index] = key ^ data
        words[index + 1] = data

    def hashfull(self) -> int:
        """Permille of the first slots filled in this search (a sample, as in Stockfish)."""
        words = self.words
        sample = min(HASHFULL_SAMPLE, self.mask + 1)
        filled = sum(1 for slot in range(sample)
                     if words[2 * slot + 1] and words[2 * slot + 1] >> _GEN_SHIFT == self.generation)
        return filled * 1000 // sample

    def close(self) -> None:
        """Let go of the block; the owner also removes it from the system."""
        if self._shm is None:
            return
        self.words.release()
        self._shm.close()
        if self.owner:
            self._shm.unlink()
        self._shm = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the resource tracker cleans up after us
            pass
