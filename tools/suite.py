#!/usr/bin/env python3
"""Run an EPD test suite (bm / am operations) against any UCI engine.

Each position gets the same fixed thinking time (or node count); a position
counts as solved when the engine's move is one of the `bm` moves and none of
the `am` moves.  Prints one line per miss and a last line `solved N/M`; the
exit status is 0 whatever the score.  Positions with neither `bm` nor `am`
are skipped.

    python tools/suite.py --engine .venv/bin/pawnstorm --suite data/suites/wac.epd --movetime 1.0

`pawnstorm epd` does the same for Pawnstorm alone, in process; this tool
drives any engine over UCI (another build, Stockfish), so that both are
measured the same way.  The suites in data/suites/ and where they come from:
data/README.md.
"""
from __future__ import annotations

import argparse
import shlex
import sys
import time

import chess
import chess.engine

from common import open_engine


def read_suite(path: str, limit: int | None = None) -> list[tuple[chess.Board, dict]]:
    """(board, operations) of the first `limit` positions that have a `bm` or `am`."""
    entries = []
    with open(path) as suite:
        for line in suite:
            if not line.strip() or line.startswith("#"):
                continue
            board, ops = chess.Board.from_epd(line.strip())
            if ops.get("bm") or ops.get("am"):
                entries.append((board, ops))
    return entries[:limit]


def solved(move: chess.Move | None, ops: dict) -> bool:
    """Whether `move` is one of the best moves and none of the avoided ones."""
    best, avoid = ops.get("bm", []), ops.get("am", [])
    return move is not None and (not best or move in best) and move not in avoid


def wanted(board: chess.Board, ops: dict) -> str:
    """What the position asks for, in SAN."""
    if ops.get("bm"):
        return " ".join(board.san(m) for m in ops["bm"])
    return "not " + " ".join(board.san(m) for m in ops["am"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", required=True, help="engine command line")
    ap.add_argument("--suite", required=True, help="EPD file with bm/am operations, e.g. data/suites/wac.epd")
    ap.add_argument("--movetime", type=float, default=1.0, help="seconds per position")
    ap.add_argument("--nodes", type=int, help="node limit per position instead of time")
    ap.add_argument("--option", action="append", default=[], help="Option=value")
    ap.add_argument("--limit", type=int, help="only the first N positions")
    ap.add_argument("--quiet", action="store_true", help="no line per miss")
    args = ap.parse_args(argv)
    entries = read_suite(args.suite, args.limit)
    limit = chess.engine.Limit(nodes=args.nodes) if args.nodes else chess.engine.Limit(time=args.movetime)
    count = 0
    t0 = time.time()
    with open_engine(shlex.split(args.engine), dict(o.split("=", 1) for o in args.option)) as engine:
        for number, (board, ops) in enumerate(entries, 1):
            move = engine.play(board, limit, game=object()).move  # a new game each: no hash carried over
            if solved(move, ops):
                count += 1
            elif not args.quiet:
                played = board.san(move) if move is not None else "nothing"
                print(f"miss {ops.get('id', number)}: played {played}, wanted {wanted(board, ops)}", flush=True)
    print(f"time {time.time() - t0:.0f}s")
    print(f"solved {count}/{len(entries)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
