#!/usr/bin/env python3
"""Run a UCI engine as if its clock were scaled: time odds for match runners.

    python -m tools.time_odds --factor 0.5 -- /usr/games/stockfish

A proxy between a match runner and an engine.  Every `go` command passes
through with its `wtime`, `btime`, `winc`, `binc` and `movetime` multiplied
by `--factor`; everything else passes unchanged, both ways.  Match runners
give both engines one time control, so this is how one side gets more time
than the other: play the match at twice the control and wrap the opponent
with `--factor 0.5`.  The opponent then thinks exactly as it would at the
normal control and, thinking on a smaller clock than it really has, never
loses on time.  Used to measure how much stronger Pawnstorm gets with more
time, against an opponent that is held fixed.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import threading

#: The `go` parameters that are durations in milliseconds.
SCALED = {"wtime", "btime", "winc", "binc", "movetime"}


def scale_go(line: str, factor: float) -> str:
    """`line` with its clock parameters scaled by `factor` if it is a `go` command."""
    tokens = line.split()
    if not tokens or tokens[0] != "go":
        return line
    for index in range(1, len(tokens) - 1):
        if tokens[index] in SCALED:
            try:
                tokens[index + 1] = str(max(1, round(int(tokens[index + 1]) * factor)))
            except ValueError:
                pass  # leave a malformed value to the engine's own error handling
    return " ".join(tokens)


def _pump_output(engine: subprocess.Popen[str]) -> None:
    assert engine.stdout is not None
    for line in engine.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--factor", type=float, required=True, help="multiplier for the engine's clock")
    parser.add_argument("command", nargs="+", help="the engine's command line (after --)")
    args = parser.parse_args(argv)
    if args.factor <= 0:
        parser.error("--factor must be positive")
    engine = subprocess.Popen(args.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    assert engine.stdin is not None
    output = threading.Thread(target=_pump_output, args=(engine,), daemon=True)
    output.start()
    try:
        for line in sys.stdin:
            engine.stdin.write(scale_go(line.rstrip("\n"), args.factor) + "\n")
            engine.stdin.flush()
            if line.strip() == "quit":
                break
    except BrokenPipeError:
        pass  # the engine has gone; its exit status is returned below
    finally:
        try:
            engine.stdin.close()
        except BrokenPipeError:
            pass
    status = engine.wait()
    output.join(timeout=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
