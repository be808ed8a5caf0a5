#!/usr/bin/env python3
"""Pool pentanomial results of several match runs into one Elo estimate.

    python tools/elo.py --penta 9,18,41,10,22 --penta 7,20,40,12,21

Each --penta is a match.py line "pentanomial [LL, LD, DD/WL, WD, WW]" (game
pairs scoring 0, 0.5, 1, 1.5, 2 points for the first engine).  The statistics
are match.py's: mean pair score, its standard error from the pair variance,
95% interval, converted to Elo with the logistic formula.
"""
from __future__ import annotations

import argparse

from common import elo, pentanomial


def pooled(pentas: list[list[int]]) -> tuple[int, float, float, float, float]:
    """(pairs, score, elo, elo_low, elo_high) of the summed pentanomial counts."""
    pairs, mean, se = pentanomial([sum(column) for column in zip(*pentas)])
    return pairs, mean, elo(mean), elo(mean - 1.96 * se), elo(mean + 1.96 * se)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--penta", action="append", required=True, help="five comma-separated counts")
    args = parser.parse_args()
    pentas = [[int(x) for x in text.split(",")] for text in args.penta]
    pairs, mean, value, low, high = pooled(pentas)
    counts = [sum(column) for column in zip(*pentas)]
    print(f"pairs {pairs} (games {2 * pairs}), pentanomial {counts}, score {mean * 100:.1f}%")
    print(f"Elo {value:+.1f} [{low:+.1f}, {high:+.1f}] (95%)")


if __name__ == "__main__":
    main()
