#!/usr/bin/env python3
"""Measure how fast the engine answers `stop` (and exits on `quit`) mid-search.

    python -m tools.latency --engine .venv/bin/pawnstorm --trials 200 --mode stop
    python -m tools.latency --engine .venv/bin/pawnstorm --trials 50 --mode quit
    python -m tools.latency --engine .venv/bin/pawnstorm --trials 200 --mode stop --threads 2

`stop`: one engine process; each trial sends `position ...`, `go infinite`,
waits a random 50-400 ms, sends `stop` and times the arrival of `bestmove`.
`quit`: a fresh process per trial; times from `quit` to process exit.
Prints median, 95th percentile and maximum in milliseconds.
"""
from __future__ import annotations

import argparse
import random
import shlex
import statistics
import time

from tools.common import RawEngine

POSITIONS = [
    "startpos",
    "fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "fen r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1",
    "fen 8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "startpos moves e2e4 e7e5 g1f3 b8c6 f1b5 a7a6",
]


def measure_stop(command: list[str], trials: int, rng: random.Random, threads: int = 1) -> list[float]:
    engine = RawEngine.start(command, {"Threads": str(threads)})
    samples = []
    for _ in range(trials):
        engine.send(f"position {rng.choice(POSITIONS)}")
        engine.send("go infinite")
        time.sleep(rng.uniform(0.05, 0.4))
        sent = engine.send("stop")
        samples.append((engine.wait_for("bestmove") - sent) * 1000)
    engine.send("quit")
    engine.proc.wait(timeout=10)
    return samples


def measure_quit(command: list[str], trials: int, rng: random.Random, threads: int = 1) -> list[float]:
    samples = []
    for _ in range(trials):
        engine = RawEngine.start(command, {"Threads": str(threads)})
        engine.send(f"position {rng.choice(POSITIONS)}")
        engine.send("go infinite")
        engine.wait_for("info depth")
        time.sleep(rng.uniform(0.05, 0.4))
        sent = engine.send("quit")
        engine.proc.wait(timeout=30)
        samples.append((time.perf_counter() - sent) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", default=".venv/bin/pawnstorm")
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--mode", choices=["stop", "quit"], default="stop")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="the engine's Threads option")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    command = shlex.split(args.engine)
    samples = (measure_stop if args.mode == "stop" else measure_quit)(command, args.trials, rng, args.threads)
    samples.sort()
    p95 = samples[min(len(samples) - 1, int(len(samples) * 0.95))]
    print(f"{args.mode}: trials {len(samples)}, median {statistics.median(samples):.1f} ms, "
          f"p95 {p95:.1f} ms, max {samples[-1]:.1f} ms")


if __name__ == "__main__":
    main()
