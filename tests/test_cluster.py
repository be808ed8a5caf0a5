"""The data generator on a Dask cluster (`--cluster`), on a local cluster the tests start.

A scheduler and two workers run on this machine, each its own process, as
on several machines (docs/cluster.md): the chunks must be the local path's
bytes, a worker killed mid-chunk must cost a retry and leave no partial
file, and a worker whose Stockfish differs from the client's is refused by
name.  Needs the `cluster` extra (in the `test` extra) and Debian's
stockfish (the teacher).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import chess.pgn
import pytest

distributed = pytest.importorskip("distributed", reason="Dask distributed (the `cluster` extra) is not installed")

from tests.conftest import STOCKFISH
from tools import cluster
from training import datagen, datagen_cluster  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
needs_stockfish = pytest.mark.skipif(STOCKFISH is None, reason="Debian's stockfish (the teacher) is not installed")

#: Tiny chunks at a shallow depth: one of each kind.
SMALL = ["--seed", "3", "--depth", "2", "--selfplay-chunks", "1", "--tree-chunks", "1", "--play-chunks", "1",
         "--chunk-games", "1", "--selfplay-nodes", "60", "--pgn-games", "1", "--no-progress"]


class LocalCluster:
    """A Dask scheduler and workers started as separate processes, as `dask scheduler` / `dask worker` would be."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True)
        self.scheduler_file = directory / "scheduler.json"
        self.processes: list[subprocess.Popen[bytes]] = []
        self.env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self._start("scheduler", "--scheduler-file", str(self.scheduler_file), "--port", "0")
        deadline = time.monotonic() + 60
        while not self.scheduler_file.exists():
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.05)
        self.client = distributed.Client(scheduler_file=str(self.scheduler_file), set_as_default=False)

    def _start(self, role: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        with open(self.directory / f"{role}-{len(self.processes)}.log", "wb") as log:
            process = subprocess.Popen([sys.executable, "-m", f"distributed.cli.dask_{role}", *args,
                                        "--host", "127.0.0.1", "--no-dashboard"], cwd=ROOT, env=env or self.env,
                                       stdout=log, stderr=log, start_new_session=True)
        self.processes.append(process)
        return process

    def add_workers(self, count: int, env: dict[str, str] | None = None) -> dict[str, int]:
        """Start `count` workers (no nanny: a killed one stays dead); returns every worker's pid by address."""
        for _ in range(count):
            self._start("worker", "--scheduler-file", str(self.scheduler_file), "--nthreads", "1", "--no-nanny",
                        env=env)
        self.client.wait_for_workers(len(self.client.scheduler_info()["workers"]) + count, timeout=60)
        return self.client.run(os.getpid)

    def close(self) -> None:
        self.client.close()
        for process in reversed(self.processes):  # workers first, without ceremony: they may be mid-task
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM if process is self.processes[0] else signal.SIGKILL)
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture
def local_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    started = LocalCluster(tmp_path / "dask")
    try:
        yield started
    finally:
        started.close()


@pytest.fixture
def tiny_pgn(tmp_path: Path) -> Path:
    """Two games of the project's Stockfish PGN, for two ``sf`` chunks."""
    path = tmp_path / "two.pgn"
    with datagen.open_pgn(str(ROOT / "data" / "stockfish-800.pgn.gz")) as handle, open(path, "w") as out:
        for _ in range(2):
            print(chess.pgn.read_game(handle), file=out, end="\n\n")
    return path


def chunk_files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in directory.iterdir() if path.name != "provenance.json"}


def datagen_process(out: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "training.datagen", "--out", str(out), *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@needs_stockfish
def test_cluster_chunks_are_the_local_bytes_and_resume(tmp_path: Path, local_cluster: LocalCluster,
                                                         tiny_pgn: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*SMALL, "--stockfish", str(STOCKFISH), "--pgn", str(tiny_pgn)]
    assert datagen.main(["--out", str(tmp_path / "local"), "--workers", "2", *argv]) == 0
    local_cluster.add_workers(2)
    out = tmp_path / "cluster"
    assert datagen.main(["--out", str(out), "--cluster", str(local_cluster.scheduler_file), *argv]) == 0
    made = chunk_files(out)
    assert sorted(made) == [f"{name}.psd.xz" for name in ("play-0000", "self-0000", "sf-0000", "sf-0001", "tree-0000")]
    assert made == chunk_files(tmp_path / "local")  # byte for byte
    chunks = json.loads((out / "provenance.json").read_text())["chunks"]
    local = json.loads((tmp_path / "local" / "provenance.json").read_text())["chunks"]
    teacher = json.loads((out / "provenance.json").read_text())["teacher"]
    for name, counts in chunks.items():  # the local counts, plus who labelled the chunk
        assert counts.pop("teacher") == teacher and counts.pop("host") and counts == local[name]
    capsys.readouterr()
    assert datagen.main(["--out", str(out), "--cluster", str(local_cluster.scheduler_file), *argv]) == 0
    assert "5 done, 0 to make" in capsys.readouterr().err


@needs_stockfish
def test_a_worker_killed_mid_chunk_costs_a_retry_and_no_partial_file(tmp_path: Path,
                                                                     local_cluster: LocalCluster) -> None:
    argv = ["--seed", "5", "--depth", "5", "--play-chunks", "1", "--chunk-games", "2", "--no-progress",
            "--stockfish", str(STOCKFISH)]
    assert datagen.main(["--out", str(tmp_path / "local"), "--workers", "1", *argv]) == 0
    pids = local_cluster.add_workers(2)
    out = tmp_path / "cluster"
    run = datagen_process(out, "--cluster", str(local_cluster.scheduler_file), *argv)
    try:
        deadline = time.monotonic() + 60
        victim = None
        while victim is None:
            assert time.monotonic() < deadline and run.poll() is None, "the chunk never started"
            victim, key = next(((worker, key) for worker, keys in local_cluster.client.processing().items()
                                for key in keys if "play-0000" in str(key)), (None, None))
            time.sleep(0.02)
        os.kill(pids[victim], signal.SIGKILL)  # mid-chunk: its teacher is labelling
        output, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, output
    assert chunk_files(out) == chunk_files(tmp_path / "local")  # written once, whole, the local bytes
    survivors = local_cluster.client.scheduler_info()["workers"]
    assert victim not in survivors and len(survivors) == 1
    assert "1 chunks made" in output
    # The scheduler's log: the chunk was sent out twice, to the victim and then, when it died, to the survivor.
    story = local_cluster.client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.story(key)))
    assert [event.finish for event in story].count("processing") == 2, story


@needs_stockfish
def test_a_worker_with_another_stockfish_is_refused_by_name(tmp_path: Path, local_cluster: LocalCluster) -> None:
    """The teacher is found on PATH: the client's is Debian's, the worker's a fake that names another version."""
    client_bin, worker_bin = tmp_path / "client-bin", tmp_path / "worker-bin"
    client_bin.mkdir(), worker_bin.mkdir()
    (client_bin / "teacher").symlink_to(STOCKFISH)
    fake = worker_bin / "teacher"
    fake.write_text(f"#!{sys.executable}\n"
                    "import sys\n"
                    "for line in sys.stdin:\n"
                    "    if line.strip() == 'uci': print('id name Stockfish 99', 'uciok', sep='\\n', flush=True)\n"
                    "    elif line.strip() == 'isready': print('readyok', flush=True)\n"
                    "    elif line.strip() == 'quit': break\n")
    fake.chmod(0o755)
    worker = local_cluster.add_workers(1, env={**local_cluster.env, "PATH": f"{worker_bin}:{os.environ['PATH']}"})
    out = tmp_path / "out"
    run = datagen_process(out, "--cluster", str(local_cluster.scheduler_file), "--play-chunks", "1",
                          "--chunk-games", "1", "--depth", "2", "--stockfish", "teacher", "--no-progress",
                          env={**os.environ, "PATH": f"{client_bin}:{os.environ['PATH']}"})
    output, _ = run.communicate(timeout=120)
    assert run.returncode == 2, output
    (address,) = worker
    assert f"worker {address} refused" in output and "'Stockfish 99'" in output, output
    assert not chunk_files(out)


@needs_stockfish
def test_a_worker_that_joined_late_checks_itself_before_its_first_chunk(tmp_path: Path) -> None:
    """`make_chunk` judges its own worker against the client's facts the first time it runs."""
    settings = datagen.Settings(tmp_path, str(STOCKFISH), 2, 1, None, 1, 0, 1, 60)
    reference = datagen_cluster.facts(settings)
    assert datagen_cluster.judge(reference, reference, settings) is None
    missing = datagen_cluster.Facts("box7", None, "FileNotFoundError: ...", reference.source, None)
    problem = datagen_cluster.judge(missing, reference, settings)
    assert problem is not None and problem.startswith(f"on host box7: no working Stockfish at {STOCKFISH}")
    other = datagen_cluster.Facts(reference.host, "Stockfish 99", None, reference.source, None)
    datagen_cluster._teachers.clear()
    with pytest.raises(cluster.WorkerRefused, match="the client's teacher is 'Stockfish 99'"):
        datagen_cluster.make_chunk(datagen.Task("play-0000", "play", 0), settings, other, datagen.make_chunk)
    assert not list(tmp_path.iterdir())


def test_run_tasks_cancels_what_is_pending_when_left(local_cluster: LocalCluster) -> None:
    """What the match runner's SPRT relies on: leaving the block early drops the tasks not yet finished."""
    local_cluster.add_workers(2)
    client = local_cluster.client
    with cluster.run_tasks(client, lambda index: time.sleep(0.05 if index == 0 else 5), range(9)) as done:
        first, _ = next(done)
    assert first == 0
    deadline = time.monotonic() + 10
    while client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)):
        assert time.monotonic() < deadline, "pending tasks were not cancelled"
        time.sleep(0.05)


def test_connect_names_an_unreachable_scheduler() -> None:
    with pytest.raises(cluster.ClusterError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        cluster.connect("tcp://127.0.0.1:9", timeout=1)
