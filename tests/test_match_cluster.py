"""tools/match.py --cluster: game pairs as tasks on a local Dask cluster the tests start.

The engines are tests/fake_uci.py's scripted ones: `legal` against
`flaky`, which crashes in some positions chosen by a digest of the
position, so every game is the same on every run and on every worker, the
pairs are a mix (both draws, a win and a draw, two wins) and an engine
starts in a fraction of a second.  The cluster's report must be the local
one; an SPRT that decides must leave every other pair unplayed; a worker
that cannot start an engine must be refused by name.  Needs the `cluster`
extra (in the `test` extra).
"""
from __future__ import annotations

import os
import re
import shlex
import sys
import time
from pathlib import Path

import chess
import pytest

pytest.importorskip("distributed", reason="Dask distributed (the `cluster` extra) is not installed")

from tests.conftest import REPO_ROOT
from tests.test_cluster import LocalCluster, local_cluster  # noqa: F401  (the fixture)

from tools import match
from tools import match_cluster
from tools.match_game import EngineSpec, Job
from tools import cluster

FAKE = REPO_ROOT / "tests" / "fake_uci.py"


def fake(mode: str) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} {mode}"


#: Seed 2 deals pairs that end DD, WD and WW, and 7 games leave the last pair one game.
MATCH = ["--engine", f"a={fake('legal')}", "--engine", f"b={fake('flaky')}", "--nodes", "1", "--max-plies", "8",
         "--quiet", "--no-progress"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = match.main(argv)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_a_cluster_match_reports_what_the_local_one_does(tmp_path: Path, local_cluster: LocalCluster,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*MATCH, "--games", "7", "--seed", "2"]
    rc, local, _ = run([*argv, "--concurrency", "2", "--pgn", str(tmp_path / "local.pgn")], capsys)
    local_cluster.add_workers(2)
    cluster_rc, remote, err = run([*argv, "--cluster", str(local_cluster.scheduler_file),
                                   "--pgn", str(tmp_path / "cluster.pgn")], capsys)
    assert rc == cluster_rc == 1, err  # the flaky engine's crashes are faults
    report = [line for line in remote.splitlines() if not line.startswith(("time:", "cluster:"))]
    assert report == [line for line in local.splitlines() if not line.startswith("time:")]
    assert (tmp_path / "cluster.pgn").read_text() == (tmp_path / "local.pgn").read_text()
    head = re.search(r"games (\d+), \+(\d+) -(\d+) =(\d+), .* pentanomial \[([\d, ]+)\]", remote)
    assert head, remote
    games, wins, losses, draws = (int(head.group(i)) for i in range(1, 5))
    penta = [int(count) for count in head.group(5).split(",")]
    assert games == wins + losses + draws == 7 and sum(penta) == 3  # the seventh game's pair is unfinished
    assert penta[2] and penta[3] and penta[4]  # a mix, or the comparison would prove little
    faults = int(re.search(r"faults: (\d+)", remote).group(1))
    assert faults == wins  # every win is the flaky engine's crash
    assert "cluster: 2 workers, 4 pairs, 4 played, 0 cancelled" in remote


def test_a_decided_sprt_cancels_the_pairs_not_begun(tmp_path: Path, local_cluster: LocalCluster,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Every engine a worker starts is logged: those of the check and of the games counted, none besides."""
    log = tmp_path / "uci.log"
    monkeypatch.delenv("FAKE_UCI_LOG", raising=False)  # the client's own check is not logged
    local_cluster.add_workers(2, env={**local_cluster.env, "FAKE_UCI_LOG": str(log)})
    rc, out, err = run([*MATCH, "--games", "400", "--seed", "3", "--sprt", "0", "150",
                        "--cluster", str(local_cluster.scheduler_file)], capsys)
    assert rc == 1, err
    assert "H1 accepted" in out, out
    games = int(re.search(r"games (\d+),", out).group(1))
    played, cancelled = map(int, re.search(r"cluster: 2 workers, 200 pairs, (\d+) played, (\d+) cancelled "
                                           r"\(the SPRT decided\)", out).groups())
    assert games < 20 and played + cancelled == 200 and played <= games <= 2 * played
    started = log.read_text().splitlines().count("uci")
    assert started == 2 * 2 + 2 * games  # the check: 2 workers x 2 engines; then 2 engines a game counted
    client = local_cluster.client
    deadline = time.monotonic() + 10
    while client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)):
        assert time.monotonic() < deadline, "the cancelled pairs are still on the scheduler"
        time.sleep(0.05)


def test_a_worker_that_cannot_start_an_engine_is_refused_by_name(tmp_path: Path, local_cluster: LocalCluster,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine is a bare name found on PATH: the client's has it, the worker's does not."""
    client_bin = tmp_path / "bin"
    client_bin.mkdir()
    engine = client_bin / "pawnstorm-fake"
    engine.write_text(f"#!/bin/sh\nexec {fake('legal')}\n")
    engine.chmod(0o755)
    (address,) = local_cluster.add_workers(1)
    monkeypatch.setenv("PATH", f"{client_bin}:{os.environ['PATH']}")
    rc, out, err = run(["--engine", f"a={fake('legal')}", "--engine", "b=pawnstorm-fake", "--nodes", "1",
                        "--games", "2", "--quiet", "--no-progress", "--cluster", str(local_cluster.scheduler_file)],
                       capsys)
    assert rc == 2 and not out
    assert f"match: worker {address} refused: on host " in err, err
    assert "engine b (pawnstorm-fake) does not start: FileNotFoundError" in err, err


def test_a_worker_that_joined_late_checks_itself_before_its_first_pair() -> None:
    """`play_pair_task` judges its own worker against the client's facts when it was not checked."""
    specs = [EngineSpec("a", shlex.split(fake("legal"))), EngineSpec("b", shlex.split(fake("flaky")))]
    reference = match_cluster.facts(specs, 10.0)
    assert [found for _, found, _ in reference.engines] == ["fake-legal", "fake-flaky"]
    assert match_cluster.judge(reference, reference, specs) is None
    other = match_cluster.Facts("box7", (("a", "fake-legal", None), ("b", "Stockfish 99", None)), reference.rules)
    args = match.build_parser().parse_args(MATCH)
    pair = [Job(0, 0, specs[0], specs[1], chess.Board()), Job(1, 0, specs[1], specs[0], chess.Board())]
    with pytest.raises(cluster.WorkerRefused, match=r"engine b \(.*\) is 'fake-flaky', the reference's is "
                                                    r"'Stockfish 99'"):
        match_cluster.play_pair_task(pair, args, other, frozenset())
    assert len(match_cluster.play_pair_task(pair, args, reference, frozenset())) == 2
