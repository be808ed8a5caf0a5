"""Offline tools answer bad input as the engine does: at once, in one line that says what was expected."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tools.cluster import ClusterError, address_problem
from tools.common import elo, elo_text, wilson
from tools.match import summarize
from tools.match_game import GameResult


@pytest.mark.parametrize("address", ["/a/mistyped/file.json", "localhost", "tcp://host", "tcp://host:port",
                                     "tcp://:8786", "http://host:8786", "tcp://host:99999", ""])
def test_an_address_that_names_no_scheduler_says_what_was_expected(address: str) -> None:
    problem = address_problem(address)
    assert problem is not None and "tcp://HOST:PORT" in problem and "scheduler file" in problem


def test_scheduler_addresses_and_files_pass(tmp_path: Path) -> None:
    scheduler_file = tmp_path / "scheduler.json"
    scheduler_file.write_text("{}")
    for address in ("tcp://10.0.0.5:8786", "tcp://box.example:1", "tls://box:8786", str(scheduler_file)):
        assert address_problem(address) is None, address


@pytest.mark.parametrize("command", [
    ["-m", "training.datagen", "--out", "OUT", "--play-chunks", "1", "--cluster", "/a/mistyped/file.json"],
    ["-m", "tools.match", "--engine", "a=x", "--engine", "b=y", "--nodes", "10", "--cluster", "/a/mistyped/file.json"],
])
def test_a_mistyped_cluster_is_refused_at_once_in_one_line(tmp_path: Path, command: list[str]) -> None:
    command = [str(tmp_path / "out") if part == "OUT" else part for part in command]
    done = subprocess.run([sys.executable, *command], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    # The address's own check refused it (its hint names the forms an address takes): no
    # connection was tried, which would have ended in "cannot reach the Dask scheduler" instead.
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "/a/mistyped/file.json" in lines[0] and "tcp://HOST:PORT" in lines[0], done.stderr


def test_an_unreachable_scheduler_is_given_up_after_the_stated_timeout() -> None:
    pytest.importorskip("distributed", reason="Dask distributed (the `cluster` extra) is not installed")
    from tools import cluster
    with pytest.raises(ClusterError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 2 s"):
        cluster.connect("tcp://127.0.0.1:9", timeout=2)


def _games(points: list[float]) -> list[GameResult]:
    """Colour-swapped pairs of games for engine "a" scoring `points` in order."""
    results = []
    for number, point in enumerate(points):
        white, black = ("a", "b") if number % 2 == 0 else ("b", "a")
        a_white = {1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}[point]
        result = a_white if white == "a" else {"1-0": "0-1", "0-1": "1-0", "1/2-1/2": "1/2-1/2"}[a_white]
        results.append(GameResult(number, number // 2, white, black, result, "checkmate", [], ""))
    return results


def test_a_one_sided_match_reports_a_bound_not_a_number() -> None:
    won = summarize(_games([1.0] * 8), "a")
    assert won.score == 1.0 and 0.5 < won.score_lo < 1.0
    text = elo_text(won.score, won.score_lo, won.score_hi)
    assert text.startswith("> +") and "2400" not in text
    assert float(text.split()[1]) == pytest.approx(elo(wilson(1.0, 8)[0]), abs=0.05) and float(text.split()[1]) < 600
    lost = summarize(_games([0.0] * 8), "a")
    assert elo_text(lost.score, lost.score_lo, lost.score_hi).startswith("< -")
    drawn = summarize(_games([0.5] * 8), "a")  # no variance either: Wilson keeps a width
    assert drawn.elo_lo < 0 < drawn.elo_hi
    nearly = summarize(_games([1.0] * 7 + [0.5]), "a")  # the normal interval would run past a score of 1
    assert 0 < nearly.score_lo < nearly.score < nearly.score_hi <= 1 and "2400" not in elo_text(
        nearly.score, nearly.score_lo, nearly.score_hi)
    mixed = summarize(_games([1.0, 0.5, 0.0, 1.0, 0.5, 0.5]), "a")
    assert elo_text(mixed.score, mixed.score_lo, mixed.score_hi).endswith("(95%)") and "[" in elo_text(
        mixed.score, mixed.score_lo, mixed.score_hi)


def test_pooled_runs_that_won_every_pair_report_a_bound(capsys: pytest.CaptureFixture[str]) -> None:
    from tools import elo as elo_tool
    sys.argv = ["elo", "--penta", "0,0,0,0,4"]
    elo_tool.main()
    assert "Elo > +" in capsys.readouterr().out
