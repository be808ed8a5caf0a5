"""Merge chunks made on another machine into a data folder.

    python -m training.merge data/nnue /tmp/device-run-1 /tmp/device-run-2

A run of `training.datagen` elsewhere (the lent device, another clone; split
from this folder's run with ``--first-chunk``) leaves chunk files and its
own `provenance.json`.  Each of its chunks is taken only if that provenance
records it (a file written after its run's last save is an orphan: it is
skipped, and a later run there or here remakes it), its file decodes
record by record and the count equals the recorded one (the read-back of
`training.verify.read_back`, as before a commit); a chunk this folder already has
is left alone, unless the files are the same bytes (chunks are
deterministic, so two machines that made the same one with the same code
made the same file; code of another session may not: chunks with
``cleared_per_game`` were labelled with the teacher's hash cleared once a
game, older ones once a position).
The chunk entries are added to this folder's `provenance.json` and
``total_written`` recounted.

Stop a `training.datagen` writing to the destination first: it keeps its own
copy of the provenance in memory and would save over the merged entries.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from training.datagen import load_provenance, save_provenance
from training.chunks import list_chunks, write_atomically
from training.verify import ChunkRejected, read_back


@dataclass
class Merged:
    """What a merge did, chunk by chunk."""

    added: list[str] = field(default_factory=list)
    records: int = 0
    orphans: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)
    total_written: int = 0  # the destination's, after the merge


def merge(destination: Path, sources: list[Path]) -> Merged:
    """Copy every recorded, readable, new chunk of `sources` into `destination` and record it there."""
    provenance = load_provenance(destination)
    merged = Merged()
    for source in sources:
        recorded = load_provenance(source)["chunks"]
        here = {chunk.name: chunk for chunk in list_chunks(destination)}
        for chunk in list_chunks(source):
            name = chunk.name
            if name not in recorded:
                merged.orphans.append(name)
                continue
            if name in here or name in provenance["chunks"]:
                same = name in here and here[name].read_bytes() == chunk.read_bytes()
                (merged.already if same else merged.conflicts).append(name)
                continue
            try:
                count = read_back(chunk, recorded)
            except ChunkRejected:
                merged.bad.append(name)
                continue
            write_atomically(destination / chunk.file_name, chunk.read_bytes())
            provenance["chunks"][name] = recorded[name]
            merged.added.append(name)
            merged.records += count
    save_provenance(destination, provenance)
    merged.total_written = provenance["total_written"]
    return merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("destination", type=Path, help="the data folder, e.g. data/nnue")
    parser.add_argument("sources", type=Path, nargs="+", help="folders of chunks with their provenance.json")
    args = parser.parse_args(argv)
    merged = merge(args.destination, args.sources)
    print(f"added {len(merged.added)} chunks ({merged.records} records); {len(merged.already)} already here, "
          f"{len(merged.orphans)} orphans skipped; total_written {merged.total_written}", file=sys.stderr)
    for label, names in (("differ from the chunk here", merged.conflicts), ("unreadable or miscounted", merged.bad)):
        if names:
            print(f"not merged, {label}: {', '.join(names)}", file=sys.stderr)
    return 1 if merged.conflicts or merged.bad else 0


if __name__ == "__main__":
    sys.exit(main())
