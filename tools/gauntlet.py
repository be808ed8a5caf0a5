"""A rating on a published scale from matches against rated engines (a gauntlet).

    python -m tools.gauntlet --engine pawnstorm --anchor phalanx=2644 --anchor hoichess=1798 \\
        phalanx.log hoichess.log

Each LOG is the output of one `tools.match` run of the engine against one
anchor (its result line "A vs B: games N, +W -L =D"; the engine may be A or
B).  The anchors' ratings come from a published list (CCRL's, say), fixed.
Prints a Markdown table (opponent, its rating, games, score, the engine's
performance against it) and the one rating that explains every game at
once: the maximum-likelihood logistic Elo with the anchors held fixed, and
its 95% interval from the likelihood's curvature.  A draw counts as half a
point of a game, as in the performance ratings rating lists print.  If the
engine won (or lost) every game there is no finite estimate, and only a
one-sided 95% bound is printed: the rating at which so clean a sweep had a
2.5% chance.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from tools.common import elo, expected_score

RESULT_LINE = re.compile(r"^(\S+) vs (\S+): games (\d+), \+(\d+) -(\d+) =(\d+)", re.MULTILINE)
#: The slope of the logistic Elo curve at a 50% score, per Elo point (ln 10 / 400).
_K = math.log(10) / 400
#: A sweep (every game won or lost) gives a bound: the rating at which it had this chance.
SWEEP_CHANCE = 0.025


@dataclass(frozen=True)
class Match:
    """The engine's games against one anchor."""

    opponent: str
    rating: float
    wins: int
    losses: int
    draws: int

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    @property
    def performance(self) -> float:
        """The anchor's rating plus the Elo of the score (clamped at the ends, as `tools.common.elo` does)."""
        return self.rating + elo(self.points / self.games)

    def performance_text(self) -> str:
        """The performance, or where every game was won or lost, its one-sided bound (`sweep_bound`)."""
        if 0 < self.points < self.games:
            return f"{self.performance:.0f}"
        won = self.points == self.games
        return f"{'>' if won else '<'} {sweep_bound([self], won):.0f}"


def read_match(text: str, engine: str, anchors: dict[str, float]) -> Match:
    """The engine's result against an anchor from a `tools.match` output; ValueError names what is missing."""
    found = RESULT_LINE.findall(text)
    if not found:
        raise ValueError("no result line (\"A vs B: games N, +W -L =D\")")
    a, b, _, wins, losses, draws = found[-1]
    if engine not in (a, b):
        raise ValueError(f"no engine named {engine} in '{a} vs {b}'")
    opponent = b if engine == a else a
    if opponent not in anchors:
        raise ValueError(f"no --anchor for {opponent}")
    won, lost = (int(wins), int(losses)) if engine == a else (int(losses), int(wins))
    if won + lost + int(draws) == 0:
        raise ValueError(f"no games against {opponent}")
    return Match(opponent, anchors[opponent], won, lost, int(draws))


def win_chance(rating: float, anchor: float) -> float:
    """The logistic expected score of a `rating` against an `anchor`."""
    return expected_score(rating - anchor)


def expected(rating: float, matches: Sequence[Match]) -> float:
    """Points the engine is expected to score at `rating` against every anchor."""
    return sum(m.games * win_chance(rating, m.rating) for m in matches)


def _bisect(matches: Sequence[Match], too_low: Callable[[float], bool]) -> float:
    """The rating where `too_low` turns false, within 4000 of the anchors (`too_low` holds below it, not above)."""
    low, high = min(m.rating for m in matches) - 4000, max(m.rating for m in matches) + 4000
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if too_low(middle) else (low, middle)
    return (low + high) / 2


def fit(matches: Sequence[Match]) -> tuple[float, float] | None:
    """(maximum-likelihood rating, its standard error); None when every game was won or every one lost.

    The likelihood's slope in the rating is K * (points - expected points),
    and expected points grow with the rating, so the estimate is where the
    two meet (found by bisection); the standard error is the inverse square
    root of the curvature, K^2 * sum of games * p * (1 - p).
    """
    points = sum(m.points for m in matches)
    games = sum(m.games for m in matches)
    if games == 0 or points in (0, games):
        return None
    rating = _bisect(matches, lambda r: expected(r, matches) < points)
    information = _K ** 2 * sum(m.games * p * (1 - p) for m in matches for p in [win_chance(rating, m.rating)])
    return rating, 1 / math.sqrt(information)


def sweep_bound(matches: Sequence[Match], won: bool) -> float:
    """The rating at which winning (`won`) or losing every one of these games had a SWEEP_CHANCE chance.

    The chance of the sweep rises (won) or falls (lost) with the rating, so
    the rating is found by bisection; it is a one-sided 95% bound.
    """
    target = math.log(SWEEP_CHANCE)

    def log_chance(rating: float) -> float:
        return sum(m.games * math.log(win_chance(rating, m.rating) if won else win_chance(m.rating, rating))
                   for m in matches)

    # Winning every game grows likelier with the rating, losing every one less likely.
    return _bisect(matches, lambda r: (log_chance(r) < target) == won)


def report(engine: str, matches: Sequence[Match]) -> str:
    """The table and the fitted rating, as printed."""
    lines = [f"| opponent | rating | games | +W -L =D | score | {engine}'s performance |",
             "|---|---:|---:|---|---:|---:|"]
    for m in matches:
        lines.append(f"| {m.opponent} | {m.rating:.0f} | {m.games} | +{m.wins} -{m.losses} ={m.draws} "
                     f"| {m.points / m.games * 100:.1f}% | {m.performance_text()} |")
    games = sum(m.games for m in matches)
    result = fit(matches)
    if result is None:
        won = sum(m.points for m in matches) == games
        lines.append(f"\n{engine}: {'above' if won else 'below'} {sweep_bound(matches, won):.0f} ({games} games, "
                     f"{'every game won' if won else 'every game lost'}: a 95% bound, no finite estimate)")
    else:
        rating, se = result
        lines.append(f"\n{engine}: {rating:.0f} [{rating - 1.96 * se:.0f}, {rating + 1.96 * se:.0f}] "
                     f"({games} games, the anchors' ratings fixed)")
    return "\n".join(lines)


def parse_anchor(text: str) -> tuple[str, float]:
    name, sep, rating = text.partition("=")
    try:
        if not sep:
            raise ValueError
        return name, float(rating)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=RATING, e.g. phalanx=2644") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", required=True, help="the rated engine's name in the match logs")
    parser.add_argument("--anchor", action="append", type=parse_anchor, default=[], metavar="NAME=RATING",
                        help="an opponent's published rating (repeat for each)")
    parser.add_argument("logs", nargs="+", type=Path, help="tools.match outputs, one match each")
    args = parser.parse_args(argv)
    anchors = dict(args.anchor)
    matches = []
    for path in args.logs:
        try:
            matches.append(read_match(path.read_text(), args.engine, anchors))
        except (OSError, ValueError) as exc:
            print(f"gauntlet: {path}: {exc}", file=sys.stderr)
            return 2
    print(report(args.engine, matches))
    return 0


if __name__ == "__main__":
    sys.exit(main())
