"""Read a data folder's chunks back and check them against its provenance.

    python -m training.verify data/nnue              # every chunk, loose or in a shard
    python -m training.verify data/nnue --untracked  # only the files (chunks, shards) git does not track yet
    python -m training.verify data/nnue --untracked --remove-orphans

Run before committing new chunks: each file is decoded record by record
(`training.chunks.read_chunk`: header, checksum and every record checked)
and its count compared with what `provenance.json` recorded for it.  A file
that provenance does not name is an *orphan*: the generator was stopped after
writing it and before saving the provenance, so nothing vouches for it; a
later run remakes it, and ``--remove-orphans`` deletes it now.  A chunk that
provenance names but that has no file is reported only when the whole folder
is checked.  Stop a `training.datagen` writing to the folder first, or the
newest files may be orphans only for the moment.

Exit status 0 when every file checked is readable, recorded and counted
right (orphans removed count as right), 1 otherwise.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from training.datagen import load_provenance
from training.chunks import Chunk, chunk_name, list_chunks, read_chunk
from training.records import DataFormatError


class ChunkRejected(Exception):
    """A chunk file that does not read back as its provenance recorded it.

    `kind` is ``"orphan"`` (provenance does not name it), ``"unreadable"``
    (the reader's message names the offset) or ``"miscounted"``.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def read_back(path: Chunk | Path, recorded: dict[str, dict]) -> int:
    """Decode one chunk record by record and return its count if provenance vouches for it.

    The one check both the read-back and `training.merge` apply, so a chunk
    that would fail here is never merged.
    """
    name = chunk_name(path)
    if name not in recorded:
        raise ChunkRejected("orphan", name)
    try:
        count = len(read_chunk(path))
    except DataFormatError as error:
        raise ChunkRejected("unreadable", str(error)) from error
    if count != recorded[name]["written"]:
        raise ChunkRejected("miscounted", f"{name} ({count} records, provenance says {recorded[name]['written']})")
    return count


@dataclass
class Verified:
    """What a read-back found, chunk by chunk."""

    files: int = 0
    records: int = 0  # in the files that passed
    orphans: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # the reader's message, which names the offset
    miscounted: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # recorded, no file (whole-folder checks only)

    @property
    def ok(self) -> bool:
        return not (self.orphans or self.unreadable or self.miscounted or self.missing)


def untracked_chunks(directory: Path) -> list[Chunk]:
    """The chunks of `directory` in files git does not track yet, loose or in shards (what a data commit would add)."""
    listed = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "-z", "--", "."],
                            cwd=directory, capture_output=True, check=True).stdout
    names = {Path(name).name for name in listed.decode().split("\0") if name}
    return [chunk for chunk in list_chunks(directory) if chunk.source.name in names]


def verify(directory: Path, chunks: list[Chunk] | None = None, remove_orphans: bool = False) -> Verified:
    """Read back `chunks` (default: every chunk of `directory`) and compare each with the provenance.

    A chunk held twice (loose and in a shard, or in two shards) counts as
    miscounted: a trainer would read its records twice.
    """
    recorded = load_provenance(directory)["chunks"]
    whole = chunks is None
    chunks = list_chunks(directory) if chunks is None else chunks
    verified = Verified()
    seen: set[str] = set()
    for chunk in chunks:
        verified.files += 1
        if chunk.name in seen:
            verified.miscounted.append(f"{chunk} (chunk {chunk.name} is held twice)")
            continue
        seen.add(chunk.name)
        try:
            verified.records += read_back(chunk, recorded)
        except ChunkRejected as rejected:
            if rejected.kind == "orphan" and remove_orphans and chunk.loose:
                chunk.source.unlink()
                continue
            {"orphan": verified.orphans, "unreadable": verified.unreadable,
             "miscounted": verified.miscounted}[rejected.kind].append(str(rejected))
    if whole:
        verified.missing = sorted(name for name in recorded if name not in seen)
    return verified


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path, help="the data folder, e.g. data/nnue")
    parser.add_argument("--untracked", action="store_true", help="check only the chunk files git does not track")
    parser.add_argument("--remove-orphans", action="store_true",
                        help="delete files that provenance.json does not record")
    args = parser.parse_args(argv)
    paths = untracked_chunks(args.directory) if args.untracked else None
    verified = verify(args.directory, paths, args.remove_orphans)
    print(f"{verified.files} chunks read back, {verified.records} records recorded and counted right", file=sys.stderr)
    for label, names in (("orphans (not in provenance.json; --remove-orphans deletes them)", verified.orphans),
                         ("unreadable", verified.unreadable), ("miscounted", verified.miscounted),
                         ("recorded but missing", verified.missing)):
        if names:
            print(f"{label}: {', '.join(names)}", file=sys.stderr)
    return 0 if verified.ok else 1


if __name__ == "__main__":
    sys.exit(main())
