#!/usr/bin/env python3
"""Pool pentanomial results of several match runs into one Elo estimate.

    python -m tools.elo --penta 9,18,41,10,22 --penta 7,20,40,12,21 [--sprt 0 15]

Each --penta is a match.py line "pentanomial [LL, LD, DD/WL, WD, WW]" (game
pairs scoring 0, 0.5, 1, 1.5, 2 points for the first engine).  The statistics
are match.py's: mean pair score, its standard error from the pair variance,
95% interval, converted to Elo with the logistic formula.  `--sprt ELO0 ELO1`
also prints the pooled log-likelihood ratio of match.py's SPRT, with
its bounds at alpha = beta = 0.05.
"""
from __future__ import annotations

import argparse

from tools.common import elo, elo_text, pentanomial, sprt_bounds, sprt_llr, wilson


def pooled_scores(pentas: list[list[int]]) -> tuple[int, float, float, float]:
    """(pairs, score, score_low, score_high) of the summed pentanomial counts (Wilson's interval where
    every pair scored alike or the normal one leaves the possible scores)."""
    pairs, mean, se = pentanomial([sum(column) for column in zip(*pentas)])
    if se > 0 and 0 <= mean - 1.96 * se and mean + 1.96 * se <= 1:
        return pairs, mean, mean - 1.96 * se, mean + 1.96 * se
    return (pairs, mean, *wilson(mean, 2 * pairs))


def pooled(pentas: list[list[int]]) -> tuple[int, float, float, float, float]:
    """(pairs, score, elo, elo_low, elo_high) of the summed pentanomial counts."""
    pairs, mean, low, high = pooled_scores(pentas)
    return pairs, mean, elo(mean), elo(low), elo(high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--penta", action="append", required=True, help="five comma-separated counts")
    parser.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"), help="print the pooled SPRT LLR")
    args = parser.parse_args()
    pentas = [[int(x) for x in text.split(",")] for text in args.penta]
    pairs, mean, low, high = pooled_scores(pentas)
    counts = [sum(column) for column in zip(*pentas)]
    print(f"pairs {pairs} (games {2 * pairs}), pentanomial {counts}, score {mean * 100:.1f}%")
    print(f"Elo {elo_text(mean, low, high)}")
    if args.sprt:
        lower, upper = sprt_bounds()
        llr = sprt_llr(counts, *args.sprt)
        verdict = "H1 accepted" if llr >= upper else "H0 accepted" if llr <= lower else "no decision"
        print(f"SPRT [{args.sprt[0]:g}, {args.sprt[1]:g}]: LLR {llr:+.2f} [{lower:.2f}, {upper:.2f}], {verdict}")


if __name__ == "__main__":
    main()
