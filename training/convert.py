"""Convert a directory of version 1 chunk files (`.psd.gz`) to version 2 (`.psd.xz`).

    python -m training.convert data/nnue --workers 1

Each file is read and validated, packed, and the packed bytes decoded again
and compared with the original records before the new file is written
(atomically) and the old one removed: a conversion never loses a record, and
an interrupted one is resumed by running the same command.
"""
from __future__ import annotations

import argparse
import lzma
import multiprocessing
import sys
from pathlib import Path

from training.packed import pack, unpack
from training.chunks import SUFFIX, SUFFIX_V1, chunk_name, read_raw, write_atomically
from training.records import DataFormatError


def convert(path: Path) -> tuple[str, int, int, int]:
    """Convert one version 1 file; returns (name, records, old bytes, new bytes)."""
    body = read_raw(path)
    data = pack(body)
    if unpack(lzma.decompress(data), str(path)) != body:  # pack is meant to be lossless: check, never assume
        raise DataFormatError(f"{path}: version 2 does not decode to the same records; left as it is")
    target = path.with_name(chunk_name(path) + SUFFIX)
    write_atomically(target, data)
    old = path.stat().st_size
    path.unlink()
    return path.name, len(body) // 32, old, len(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    paths = sorted(args.directory.glob("*" + SUFFIX_V1))
    records = old = new = 0
    with multiprocessing.Pool(args.workers) as pool:
        for done, (_name, count, before, after) in enumerate(pool.imap_unordered(convert, paths), 1):
            records, old, new = records + count, old + before, new + after
            if done % 500 == 0:
                print(f"{done}/{len(paths)} files", file=sys.stderr, flush=True)
    per = f"{old / records:.2f} -> {new / records:.2f} bytes a record" if records else "nothing to convert"
    print(f"converted {len(paths)} files, {records} records, {old} -> {new} bytes ({per})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
