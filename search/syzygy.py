"""Syzygy specifics: opening and checking the files, and ranking root moves by DTZ.

python-chess registers a Syzygy file by its name only and reads it at the
first probe, so a truncated or damaged file would surface in the middle of
a game.  `open_syzygy` reads every header up front (magic, size, the block
layout the header promises) and leaves out, with a message, each file that
fails; what is left can still fail mid-search (damage inside the compressed
data has no checksum), and the probes in `search.tablebase` catch that.

At the root, a won position is converted by playing a move of the smallest
DTZ (plies to the next capture, pawn move or mate): DTZ-optimal play reaches
the zeroing move within DTZ plies whatever the defence, so a win the tables
call safe is never spoilt by the fifty-move rule, and every conversion
starts a fresh table and a fresh count.  Stockfish instead keeps every win
and lets its search pick; Pawnstorm's search sees no difference between
them (they are all "won") and wanders, so the tables decide.  The loser
keeps the moves of the largest DTZ, the longest resistance; a draw keeps
every drawing move and lets the search choose.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterator

import chess

if TYPE_CHECKING:
    import chess.syzygy

#: Plies from a capture or pawn move until the fifty-move rule draws.
FIFTY_MOVE_PLIES = 100
#: Stockfish's scale for ranking root moves by DTZ.
MAX_RANK = 1 << 18
#: A win ranked at least this high still wins under the fifty-move rule
#: (a loss ranked at most -RANK_BOUND still loses).
RANK_BOUND = MAX_RANK - FIFTY_MOVE_PLIES
#: Root DTZ of a move that zeroes into a position of the given WDL for the
#: side that moved (Stockfish's dtz_before_zeroing).
DTZ_BEFORE_ZEROING = {2: 1, 1: 101, 0: 0, -1: -101, -2: -1}
#: Every Syzygy file ends with a 16-byte checksum after its last block.
CHECKSUM_BYTES = 16


def dtz_rank(dtz: int, clock: int) -> int:
    """Rank of a root move whose DTZ (counted from the root) is `dtz`; higher is better.

    Wins rank by plies to zeroing, fewest first, and stay wins while the
    zeroing move comes by ply 100 of the fifty-move count (`clock` at the
    root); beyond that they are cursed.  Losses rank by resistance, longest
    first, and a loss whose zeroing would come after ply 100 is blessed:
    the rule saves it.
    """
    if dtz > 0:
        return MAX_RANK - (dtz + clock)
    if dtz < 0:
        return -MAX_RANK + (-dtz + clock)
    return 0


def is_decided(rank: int) -> bool:
    """Whether a rank is a win or a loss the fifty-move rule does not touch."""
    return abs(rank) >= RANK_BOUND


# --- opening and checking the files ----------------------------------------------------------


def open_syzygy(directories: list[str]) -> tuple[chess.syzygy.Tablebase, list[str]]:
    """The tables in `directories`, each file checked; messages for the user about what was left out."""
    import chess.syzygy

    tables = chess.syzygy.Tablebase()
    messages = []
    for directory in directories:
        if not os.path.isdir(directory):
            messages.append(f"Syzygy: {directory!r} is not a directory")
            continue
        try:
            found = tables.add_directory(directory)
        except (OSError, ValueError) as error:
            messages.append(f"Syzygy: cannot read {directory!r}: {error}")
            continue
        if not found:
            messages.append(f"Syzygy: no tables (*.rtbw, *.rtbz) in {directory!r}")
    messages.extend(_drop_damaged(tables))
    return tables, messages


def _drop_damaged(tables: chess.syzygy.Tablebase) -> list[str]:
    """Read every table's header now; forget the tables that fail, one message each."""
    messages = []
    for registry, kind in ((tables.wdl, "WDL"), (tables.dtz, "DTZ")):
        for table in {id(table): table for table in registry.values()}.values():
            problem = table_problem(table, kind)
            if problem is None:
                continue
            messages.append(f"Syzygy: {table.path!r} is damaged ({problem}); {kind} table {table.key} not used")
            table.close()
            for key in [key for key, value in registry.items() if value is table]:
                del registry[key]
    return messages


def table_problem(table: chess.syzygy.Table, kind: str) -> str | None:
    """What is wrong with one table file, or None when its header and size are sound."""
    try:
        if kind == "WDL":
            table.init_table_wdl()  # type: ignore[attr-defined]
        else:
            table.init_table_dtz()  # type: ignore[attr-defined]
    except Exception as error:  # bad magic, bad size, a header pointing past the end
        return f"{type(error).__name__}: {error}"
    assert table.data is not None
    end = _data_end(table, kind)
    if end is not None and end + CHECKSUM_BYTES > len(table.data):
        return f"truncated: {len(table.data)} bytes, the header needs {end + CHECKSUM_BYTES}"
    return None


def _data_end(table: chess.syzygy.Table, kind: str) -> int | None:
    """Where the last compressed block ends, as the header lays it out; None if unknown.

    Reads python-chess's parsed header (pairs data and block sizes), which
    is the layout of Syzygy's own probing code.
    """
    try:
        return max(start + size for start, size in _blocks(table, kind))
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def _blocks(table: chess.syzygy.Table, kind: str) -> Iterator[tuple[int, int]]:
    """(start, length) of each compressed data section of an initialised table."""
    size = table.size
    if not table.has_pawns:
        if kind == "WDL":
            for side, pairs in table.precomp.items():  # type: ignore[attr-defined]
                yield pairs.data, size[3 * side + 2]
        else:
            yield table.precomp.data, size[2]  # type: ignore[attr-defined]
        return
    for file, data in enumerate(table.files):  # type: ignore[attr-defined]
        if kind == "WDL":
            for side, pairs in data.precomp.items():
                yield pairs.data, size[6 * file + 3 * side + 2]
        elif hasattr(data, "precomp"):
            yield data.precomp.data, size[3 * file + 2]
