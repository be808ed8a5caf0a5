#!/usr/bin/env python3
"""Resident memory of the engine against its `Hash` setting.

    python -m tools.memory --engine .venv/bin/pawnstorm --hash 16 64 256 --seconds 60

For each Hash size: start the engine, read RSS after `isready` with Hash=1
(the interpreter's baseline), set Hash, search the middlegame for the given
time with `go infinite`, then read RSS and `hashfull`.  Linux only (/proc).
"""
from __future__ import annotations

import argparse
import shlex
import time

from tools.common import RawEngine


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def measure(command: list[str], hash_mb: int, seconds: float) -> tuple[float, float, int]:
    engine = RawEngine.start(command)
    engine.send("setoption name Hash value 1")
    engine.send("isready")
    engine.wait_for("readyok")
    baseline = rss_mb(engine.proc.pid)
    engine.send(f"setoption name Hash value {hash_mb}")
    engine.send("position fen r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1")
    engine.send("go infinite")
    deadline = time.monotonic() + seconds
    hashfull = 0
    while time.monotonic() < deadline:
        try:
            _, line = engine.lines.get(timeout=1)
        except Exception:
            continue
        if line and " hashfull " in line:
            hashfull = int(line.split(" hashfull ")[1].split()[0])
    after = rss_mb(engine.proc.pid)
    engine.send("stop")
    engine.send("quit")
    engine.proc.wait(timeout=30)
    return baseline, after, hashfull


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", default=".venv/bin/pawnstorm")
    parser.add_argument("--hash", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    command = shlex.split(args.engine)
    print("| Hash (MB) | baseline RSS (MB) | RSS after search (MB) | growth (MB) | hashfull (permille) |")
    print("|---:|---:|---:|---:|---:|")
    for hash_mb in args.hash:
        baseline, after, hashfull = measure(command, hash_mb, args.seconds)
        print(f"| {hash_mb} | {baseline:.1f} | {after:.1f} | {after - baseline:.1f} | {hashfull} |")


if __name__ == "__main__":
    main()
