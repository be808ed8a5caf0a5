"""Run an EPD test suite (bm / am operations) against any UCI engine.

Each position gets the same fixed thinking time (or node count); a position
counts as solved when the engine's move is one of the `bm` moves and none of
the `am` moves.  Prints one line per miss and a last line `solved N/M`; the
exit status is 0 whatever the score.  Positions with neither `bm` nor `am`
are skipped.

    python -m tools.suite --engine .venv/bin/pawnstorm --suite data/suites/wac.epd --movetime 1.0

`pawnstorm epd` does the same for Pawnstorm alone, in process; this tool
drives any engine over UCI (another build, Stockfish), with the same reading
and scoring of the suite (`uci_engine.epd`), so that both are measured the
same way.  The suites in data/suites/ and where they come from:
data/README.md.
"""
from __future__ import annotations

import argparse
import shlex
import sys
import time

import chess
import chess.engine

from tools.common import open_engine
from uci_engine.epd import read_suite, solved, wanted


def read_suite_file(path: str, limit: int | None = None) -> list[tuple[chess.Board, dict]]:
    """(board, operations) of the first `limit` usable positions (`uci_engine.epd.read_suite`'s rules)."""
    with open(path, encoding="utf-8") as suite:
        entries, problems = read_suite(suite.read().splitlines())
    for problem in problems:
        print(f"{path}: {problem}", file=sys.stderr)
    return [(board, ops) for _, board, ops in entries][:limit]


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
    entries = read_suite_file(args.suite, args.limit)
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
