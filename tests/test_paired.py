"""tools/paired.py: per-opening differences between two versions' runs against one opponent."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

from tools import paired


def log(results: list[str], first: str = "ps", second: str = "sf") -> str:
    """match.py's game lines: odd games with `first` as White, even ones reversed."""
    lines = []
    for number, result in enumerate(results, start=1):
        white, black = (first, second) if number % 2 else (second, first)
        lines.append(f"[{number}/{len(results)}] {white} vs {black}: {result} (checkmate)  | ps ...")
    return "\n".join(lines) + "\nScore of ps vs sf: ...\n"


def test_pair_scores_count_the_engine_in_both_colours_and_drop_unfinished_pairs() -> None:
    text = log(["1-0", "1-0", "1/2-1/2", "0-1", "1-0"])  # the fifth game has no partner yet
    assert paired.pair_scores(text, "ps") == {1: 1.0, 2: 1.5}
    assert paired.pair_scores(text, "sf") == {1: 1.0, 2: 0.5}
    assert paired.pair_scores(text, "nobody") == {}


def test_games_finished_out_of_order_pair_by_their_opening() -> None:
    """With --concurrency 2 game 2k may finish before 2k-1: match.py names each game's opening."""
    lines = ["[1/4] sf vs ps: 1-0 (checkmate), opening 1  | ...",   # opening 1, ps Black: 0
             "[2/4] ps vs sf: 1-0 (checkmate), opening 2  | ...",   # opening 2, ps White: 1
             "[3/4] ps vs sf: 1/2-1/2 (stalemate), opening 1  | ...",  # opening 1, ps White: 0.5
             "[4/4] sf vs ps: 0-1 (adjudicated win), opening 3  | ..."]  # opening 3, partner unfinished
    assert paired.pair_scores("\n".join(lines), "ps") == {1: 0.5}


def test_difference_standard_error_and_z_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = log(["1-0", "0-1", "1-0", "1-0", "0-1", "0-1"])  # ps scores 2, 1, 1 a pair
    old = log(["0-1", "0-1", "1-0", "0-1", "0-1", "1-0"])  # ps scores 1, 2, 0 a pair
    common, diffs = paired.differences(paired.pair_scores(new, "ps"), paired.pair_scores(old, "ps"))
    assert common == [1, 2, 3] and diffs == [1.0, -1.0, 1.0]
    pairs, mean, se, z = paired.summary(diffs)
    sd = math.sqrt(((1 - 1 / 3) ** 2 * 2 + (-1 - 1 / 3) ** 2) / 2)
    assert pairs == 3 and mean == pytest.approx(1 / 6) and se == pytest.approx(sd / math.sqrt(3) / 2)
    assert z == pytest.approx((1 / 3) / (sd / math.sqrt(3)))
    (tmp_path / "new.log").write_text(new)
    (tmp_path / "old.log").write_text(old)
    # Two runs pool pair by pair: the same run twice doubles the pairs, keeps the mean.
    args = ["--engine", "ps"] + [str(tmp_path / name) for name in ("new.log", "old.log") * 2]
    assert paired.main(args) == 0
    out = capsys.readouterr().out
    assert "new.log vs old.log: 3 pairs, 66.7% vs 50.0%" in out
    assert "pooled: 6 pairs (12 games each), difference +0.167 a game" in out


def test_identical_runs_differ_by_nothing_and_odd_log_counts_are_refused(tmp_path: Path) -> None:
    assert paired.summary([0.0, 0.0, 0.0]) == (3, 0.0, 0.0, 0.0)
    assert paired.summary([1.0, 1.0])[3] == math.inf
    (tmp_path / "a.log").write_text(log(["1-0", "0-1"]))
    with pytest.raises(SystemExit):
        paired.main(["--engine", "ps", str(tmp_path / "a.log")])
    with pytest.raises(SystemExit):  # one common pair: no standard error
        paired.main(["--engine", "ps", str(tmp_path / "a.log"), str(tmp_path / "a.log")])
