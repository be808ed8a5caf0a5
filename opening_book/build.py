"""Build a small polyglot book from a big one.

A full book is mostly rare side lines that an engine never needs and that
bloat the distribution. This tool keeps only the popular lines near the
start position::

    python -m opening_book.build SRC.bin OUT.bin [--plies N] [--min-weight-share F] [--max-moves K]

Starting from the initial position, positions are visited breadth-first (so
a transposition is expanded at its shallowest depth, once). In each position
with fewer than ``plies`` half-moves played, the legal book moves are ranked
by weight; a move survives if its weight is at least ``min_weight_share`` of
the position's total and it is among the ``max_moves`` heaviest. Surviving
entries are written unchanged (raw move, weight and learn value) and their
moves are followed.

The source is checked as the engine checks a book; a source that gives no
entry leaves the output untouched (exit status 1), and the output is written
to a temporary file first and renamed into place, so a failed run never
leaves a half-written or empty book where a good one was.
"""

from __future__ import annotations

import argparse
import collections
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Optional, Sequence, Union

import chess
import chess.polyglot

from opening_book.book import ENTRY_STRUCT, book_problem

StrPath = Union[str, "os.PathLike[str]"]


def _surviving(entries: list[chess.polyglot.Entry], min_weight_share: float, max_moves: int) -> list[chess.polyglot.Entry]:
    """Return the entries of one position that pass the share and count limits, heaviest first."""
    total = sum(entry.weight for entry in entries)
    kept = [entry for entry in entries if entry.weight >= min_weight_share * total]
    kept.sort(key=lambda entry: entry.weight, reverse=True)  # Stable: ties keep book order.
    return kept[:max_moves]


def build_book(src: StrPath, dst: StrPath, plies: int = 12, min_weight_share: float = 0.05, max_moves: int = 6) -> tuple[int, int]:
    """Write the pruned book of *src* to *dst*; return ``(positions, entries)`` written.

    The output is sorted by key, then by descending weight, because polyglot
    readers binary-search the key and many take the first entry as the main
    move.  No entry kept: *dst* is left as it was, and ``(0, 0)`` returned.
    """
    written: list[tuple[int, int, int, int]] = []
    positions = 0
    start = chess.Board()
    seen = {chess.polyglot.zobrist_hash(start)}
    queue = collections.deque([(start, 0)])

    with chess.polyglot.open_reader(src) as reader:
        while queue:
            board, depth = queue.popleft()
            if depth >= plies:
                continue
            key = chess.polyglot.zobrist_hash(board)
            # minimum_weight=0 so that the share is computed over the whole position.
            kept = _surviving(list(reader.find_all(board, minimum_weight=0)), min_weight_share, max_moves)
            if kept:
                positions += 1
            for entry in kept:
                # raw_move, not move: keeps polyglot castling (e1h1) intact.
                written.append((key, entry.raw_move, entry.weight, entry.learn))
                child = board.copy(stack=False)
                child.push(entry.move)
                child_key = chess.polyglot.zobrist_hash(child)
                if child_key not in seen:
                    seen.add(child_key)
                    queue.append((child, depth + 1))

    if not written:
        return 0, 0
    written.sort(key=lambda row: (row[0], -row[2]))
    _write_atomically(Path(dst), b"".join(ENTRY_STRUCT.pack(*row) for row in written))
    return positions, len(written)


def _write_atomically(path: Path, data: bytes) -> None:
    """Write *data* to a temporary file beside *path*, then rename it over *path*."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent if str(path.parent) else ".")
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def _share(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and 0 <= value <= 1):
        raise argparse.ArgumentTypeError(f"expected a share from 0 to 1, got {text!r}")
    return value


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(prog="python -m opening_book.build", description="Prune a polyglot opening book to its popular lines.")
    parser.add_argument("src", help="source polyglot book (.bin)")
    parser.add_argument("out", help="pruned polyglot book to write")
    parser.add_argument("--plies", type=_at_least_one, default=12, help="number of half-moves covered (default: 12)")
    parser.add_argument("--min-weight-share", type=_share, default=0.05, help="minimum share of a position's total weight for a move to be kept, 0 to 1 (default: 0.05)")
    parser.add_argument("--max-moves", type=_at_least_one, default=6, help="maximum moves kept per position (default: 6)")
    args = parser.parse_args(argv)

    problem = book_problem(Path(args.src))
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    try:
        positions, entries = build_book(args.src, args.out, args.plies, args.min_weight_share, args.max_moves)
    except (OSError, ValueError) as err:  # (ValueError: python-chess's reader on a damaged book)
        print(f"error: {err}", file=sys.stderr)
        return 1
    if not entries:
        print(f"error: {args.src} gives no book move from the start position; {args.out} left as it was",
              file=sys.stderr)
        return 1
    print(f"wrote {positions} positions, {entries} entries to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
