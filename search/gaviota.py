"""Gaviota specifics: opening the directories and checking each file before it is used.

Gaviota tables (``*.gtb.cp4``, distance to mate) are read with python-chess's
pure-Python prober (see `search.tablebase` for why).  python-chess registers
a table by its name and reads it at the first probe, so a truncated or
damaged file would surface in the middle of a game: `open_gaviota` checks
every header and block index up front and leaves out, with a message, each
file that fails.  Damage inside the compressed blocks has no checksum; the
probes in `search.tablebase` catch that.
"""
from __future__ import annotations

import glob
import os
import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import chess.gaviota

#: A Gaviota file starts with ten little-endian 32-bit words; the ninth is
#: where the block index that follows them ends (where the data begins).
GAVIOTA_HEADER = struct.Struct("<10I")


def open_gaviota(directories: list[str]) -> tuple[chess.gaviota.PythonTablebase, list[str]]:
    """python-chess's pure-Python prober over `directories`, and a message for each directory or file left out."""
    import chess.gaviota  # slow to import (builds index tables): only when asked for

    tables = chess.gaviota.PythonTablebase()
    messages = []
    for directory in directories:
        if not os.path.isdir(directory):
            messages.append(f"Gaviota: {directory!r} is not a directory")
            continue
        before = len(tables.available_tables)
        try:
            tables.add_directory(directory)
        except (OSError, ValueError) as error:
            messages.append(f"Gaviota: cannot read {directory!r}: {error}")
            continue
        if len(tables.available_tables) == before:
            messages.append(_no_tables(directory))
    for key, path in list(tables.available_tables.items()):
        problem = gaviota_table_problem(path, key)
        if problem is not None:
            messages.append(f"Gaviota: {path!r} is damaged ({problem}); table {gaviota_name(key)} not used")
            del tables.available_tables[key]
    return tables, messages


def gaviota_name(key: str) -> str:
    """A Gaviota table's key as a material key: "kqk" -> "KQvK"."""
    black = key.find("k", 1)
    return key.upper() if black < 0 else f"{key[:black].upper()}v{key[black:].upper()}"


def gaviota_table_problem(path: str, key: str) -> str | None:
    """What is wrong with one Gaviota file, or None when its header and block index are sound.

    The header gives where the block index ends; the index must hold
    one entry per block of the table (both sides to move) and one more, rise
    from there, and end within the file.  Damage inside the compressed
    blocks has no checksum: the probes catch that.
    """
    import chess.gaviota

    if key not in chess.gaviota.EGKEY:
        return "not a Gaviota table name"
    if not os.path.isfile(path):
        return "not a regular file"  # (a pipe would block the read below)
    per_side = 1 + (chess.gaviota.EGKEY[key].maxindex - 1) // chess.gaviota.ENTRIES_PER_BLOCK
    entries = 2 * per_side + 1
    index_end = GAVIOTA_HEADER.size + 4 * entries
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            head = stream.read(index_end)
    except OSError as error:
        return f"{type(error).__name__}: {error}"
    if len(head) < index_end:
        return f"truncated: {size} bytes, the header and block index need {index_end}"
    header_index_end = GAVIOTA_HEADER.unpack_from(head)[8]
    if header_index_end != index_end:
        return (f"invalid header: block index ends at byte {header_index_end}, "
                f"{entries - 1} blocks need {index_end}")
    index = struct.unpack_from(f"<{entries}I", head, GAVIOTA_HEADER.size)
    if index[0] != index_end or any(start > end for start, end in zip(index, index[1:])):
        return "invalid block index"
    if index[-1] > size:
        return f"truncated: {size} bytes, the block index needs {index[-1]}"
    return None


def _no_tables(directory: str) -> str:
    """Why a directory gave no tables: the pure-Python reader needs the cp4 compression."""
    others = sorted({os.path.basename(name).split(".gtb.")[1]
                     for name in glob.glob(os.path.join(glob.escape(directory), "*.gtb.cp*"))})
    if others:
        return (f"Gaviota: {directory!r} holds only {', '.join(others)} tables; "
                "Pawnstorm reads *.gtb.cp4 (LZMA) tables")
    return f"Gaviota: no tables (*.gtb.cp4) in {directory!r}"
