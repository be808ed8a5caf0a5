#!/usr/bin/env python3
"""Compare two versions of an engine that played the same opponent on the same openings.

    python -m tools.paired --engine ps new-1.log old-1.log [new-2.log old-2.log ...]

Each log is match.py's output (its "[i/N] white vs black: result (reason),
opening P" lines).  When both versions played the same opponent with the
same seed and openings file, opening P of one log (its two games, both
colours) is opening P of the other, so the difference of their pair scores
removes the openings' share of the variance: this is more sensitive than
comparing the two Elo intervals, and it works for runs played at the same
time (both arms meet the same machine load).  Several runs (with other
seeds) pool: every pair counted once.  Pairs one of the logs did not finish
are left out.  Prints the mean difference per game, its standard error and
z (positive: the first log's version scored more).  Logs older than the
"opening P" field are paired by game number (games 2k-1 and 2k), which is
right only for matches of --concurrency 1: otherwise games finish out of order.
"""
from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

GAME = re.compile(r"^\[(\d+)/\d+\] (\S+) vs (\S+): (1-0|0-1|1/2-1/2)")
OPENING = re.compile(r", opening (\d+)\b")
POINTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def pair_scores(text: str, engine: str) -> dict[int, float]:
    """Opening number -> `engine`'s points (0..2) in that opening's two games."""
    by_opening: dict[int, list[float]] = {}
    for line in text.splitlines():
        found = GAME.match(line)
        if not found or engine not in (found[2], found[3]):
            continue
        points = POINTS[found[4]]
        opening = OPENING.search(line)
        pair = int(opening[1]) if opening else (int(found[1]) + 1) // 2
        by_opening.setdefault(pair, []).append(points if found[2] == engine else 1.0 - points)
    return {pair: sum(games) for pair, games in by_opening.items() if len(games) == 2}


def differences(first: dict[int, float], second: dict[int, float]) -> tuple[list[int], list[float]]:
    """The pairs both versions finished, and per pair first's points minus second's."""
    common = sorted(first.keys() & second.keys())
    return common, [first[pair] - second[pair] for pair in common]


def summary(diffs: list[float]) -> tuple[int, float, float, float]:
    """(pairs, mean difference per game, its standard error, z)."""
    count = len(diffs)
    if count < 2:
        raise ValueError("need at least two common game pairs")
    mean = sum(diffs) / count
    variance = sum((d - mean) ** 2 for d in diffs) / (count - 1)
    se = math.sqrt(variance / count)
    z = mean / se if se else (math.copysign(math.inf, mean) if mean else 0.0)
    return count, mean / 2, se / 2, z


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", required=True, help="the compared engine's name in the logs (match.py's NAME=)")
    parser.add_argument("logs", nargs="+", type=Path, help="FIRST SECOND, FIRST SECOND ... (one pair per run)")
    args = parser.parse_args(argv)
    if len(args.logs) % 2:
        parser.error("logs come in pairs: the first version's log, then the second's")
    pooled: list[float] = []
    for first_log, second_log in zip(args.logs[::2], args.logs[1::2]):
        first = pair_scores(first_log.read_text(), args.engine)
        second = pair_scores(second_log.read_text(), args.engine)
        common, diffs = differences(first, second)
        if common:
            print(f"{first_log.name} vs {second_log.name}: {len(common)} pairs, "
                  f"{sum(first[p] for p in common) / (2 * len(common)):.1%} vs "
                  f"{sum(second[p] for p in common) / (2 * len(common)):.1%}")
        pooled += diffs
    try:
        pairs, mean, se, z = summary(pooled)
    except ValueError as error:
        parser.error(str(error))
    print(f"pooled: {pairs} pairs ({2 * pairs} games each), difference {mean:+.3f} a game, SE {se:.3f}, z {z:+.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
