"""`python -m tools.match ... --cluster ADDRESS`: each game pair one task on a Dask cluster.

Imported by match.py only when --cluster is given, so a local match needs no
Dask.  The talk with the cluster is tools/cluster.py's (connect, check
every worker, run tasks, stop); what is here is the match's part of it:

* a task plays one pair (an opening with colours swapped) by
  `match_game.play_pair`, the same `play_game` as the local path, and
  sends back its `GameResult`s; the client pools them, game by game, into
  the same counts, Elo, faults and SPRT as a local match (`after_game`);
* the openings travel inside the tasks (each `Job` holds its start
  position), so a worker needs no EPD file; the engines are commands run
  on the worker, so each worker must have them at the same paths
  (relative paths are from the worker's working directory);
* before the first pair, every worker present must start both engines
  with their --option values and read the same `id name` as the client
  (or, for an engine the client cannot start, as the first worker that
  can), and hold the same game rules (a digest of tools/match_game.py,
  common.py and this file); a refusal names the worker, its host and
  what failed.  A worker that joins later checks itself before its first
  pair;
* once the SPRT decides (or at a first Ctrl-C), no game starts anywhere:
  the pairs no worker has taken are cancelled, a running pair stops
  after the game in play, and the games already begun come back and
  count, as the local path lets its running games finish and count.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import socket
import sys
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from tools.common import open_engine
from tools.match_game import EngineSpec, GameResult, Job, play_pair

from tools import cluster
from tools.cluster import ClusterError  # noqa: F401  (match.py catches it from here)

#: The files that make a game: a worker whose copies differ would play by other rules.
RULES = ("match_game.py", "common.py", "match_cluster.py")


@dataclass(frozen=True)
class Facts:
    """What a machine would play a pair with: hashable, so a worker process can remember its verdict."""

    host: str
    engines: tuple[tuple[str, str | None, str | None], ...]  # (engine, its `id name` or None, why it did not start)
    rules: str  # digest of RULES

    def engine_id(self, name: str) -> str | None:
        return next((found for engine, found, _ in self.engines if engine == name), None)


def rules_digest() -> str:
    """SHA-256 over RULES (names and contents), from this file's folder."""
    folder = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in RULES:
        digest.update(name.encode() + b"\0" + (folder / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def facts(specs: Sequence[EngineSpec], start_timeout: float) -> Facts:
    """Start each engine with its options, read its `id name`, quit it (run on every worker, and on the client)."""
    engines = []
    for spec in specs:
        found = problem = None
        try:
            engine = open_engine(spec.cmd, spec.options, timeout=start_timeout, protocol=spec.protocol)
            try:
                found = str(engine.id.get("name", "?"))
            finally:
                engine.quit()
        except Exception as error:  # whatever stops it starting is the worker's problem to name
            problem = f"{type(error).__name__}: {error}"
        engines.append((spec.name, found, problem))
    return Facts(socket.gethostname(), tuple(engines), rules_digest())


def judge(worker: Facts, reference: Facts, specs: Sequence[EngineSpec]) -> str | None:
    """Why `worker` may not play this match's pairs, or None."""
    problems = []
    for (name, found, problem), spec in zip(worker.engines, specs):
        wanted = reference.engine_id(name)
        if found is None:
            problems.append(f"engine {name} ({' '.join(spec.cmd)}) does not start: {problem}")
        elif wanted is not None and found != wanted:
            problems.append(f"engine {name} ({' '.join(spec.cmd)}) is {found!r}, the reference's is {wanted!r}")
    if worker.rules != reference.rules:
        problems.append(f"its tools/match_game.py, common.py or match_cluster.py differ from the client's "
                        f"(digest {worker.rules} vs {reference.rules})")
    return f"on host {worker.host}: " + "; ".join(problems) if problems else None


def judge_filling(reference: "cf.Future[Facts]", specs: Sequence[EngineSpec]) -> tuple[
        Callable[[Facts], str | None], Callable[[], Facts]]:
    """A judge for `check_workers`, and the reference it ends with.

    The client's own engines (`reference`, probed while the workers are)
    are the reference; an engine the client cannot start (it need not have
    them) takes its `id name` from the first worker, in address order,
    that can.
    """
    current: list[Facts] = []

    def judge_worker(worker: Facts) -> str | None:
        if not current:
            current.append(reference.result())
        engines = tuple((name, found if found is not None else worker.engine_id(name), problem)
                        for name, found, problem in current[0].engines)
        current[0] = replace(current[0], engines=engines)
        return judge(worker, current[0], specs)

    return judge_worker, lambda: current[0] if current else reference.result()


# --- on the worker -------------------------------------------------------------

_lock = threading.Lock()
_verdicts: dict[tuple[str, Facts], str | None] = {}  # (worker, reference) -> its problem, once per worker process


def play_pair_task(pair: list[Job], args: argparse.Namespace, reference: Facts,
                   checked: frozenset[str]) -> list[GameResult]:
    """The task: one pair by `match_game.play_pair`, stopping before a game once the client has called stop.

    A worker not in `checked` (it joined after the check) first checks
    itself against `reference`, once per worker process.
    """
    address = cluster.worker_address()
    if address not in checked:
        specs = [pair[0].white, pair[0].black]
        with _lock:
            if (address, reference) not in _verdicts:
                _verdicts[address, reference] = judge(facts(specs, args.start_timeout), reference, specs)
        cluster.refuse_if(_verdicts[address, reference])
    return play_pair(pair, args, keep_going=lambda: not cluster.stop_requested())


# --- on the client -------------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    """How the cluster's part went, for the report's last line."""

    workers: int
    pairs: int  # submitted
    played: int  # pairs with at least one game played
    stopped: str  # why it stopped early ("the SPRT decided", "interrupted"), or ""

    @property
    def cancelled(self) -> int:
        """Pairs of which no game was played: cancelled before a worker took them, or stopped before their first game."""
        return self.pairs - self.played

    def __str__(self) -> str:
        return (f"cluster: {self.workers} workers, {self.pairs} pairs, {self.played} played, "
                f"{self.cancelled} cancelled" + (f" ({self.stopped})" if self.stopped else ""))


def pairs_of(jobs: Sequence[Job]) -> list[list[Job]]:
    """The jobs grouped by pair, in order (the last pair of an odd --games holds one game)."""
    pairs: dict[int, list[Job]] = {}
    for job in jobs:
        pairs.setdefault(job.pair, []).append(job)
    return list(pairs.values())


def play(address: str, jobs: Sequence[Job], args: argparse.Namespace,
         after_game: Callable[[list[GameResult]], bool]) -> tuple[list[GameResult], Outcome]:
    """Play `jobs` on the cluster at `address`; the results in the order they came back, and the Outcome.

    `after_game(results)` runs after each game as in `match.run_games`;
    True stops the match (`Tasks.stop`).  Raises ClusterError (a
    WorkerRefused naming the worker) when the cluster cannot play the
    match; before the first pair when it can tell then.
    """
    pairs = pairs_of(jobs)
    if not pairs:
        return [], Outcome(0, 0, 0, "")
    specs = [jobs[0].white, jobs[0].black]
    results: list[GameResult] = []
    played = 0
    stopped = ""
    own = cf.ThreadPoolExecutor(1)  # the client's engines start while it connects and the workers start theirs
    judge_worker, final_reference = judge_filling(own.submit(facts, specs, args.start_timeout), specs)
    own.shutdown(wait=False)  # its one job still runs to the end
    with cluster.connect(address) as client:
        checked = cluster.check_workers(client, facts, judge_worker, specs, args.start_timeout)
        reference = final_reference()
        with cluster.run_tasks(client, play_pair_task, pairs, args, reference, frozenset(checked),
                               label=lambda pair: pair[0].pair) as tasks:

            def collect() -> None:
                nonlocal played, stopped
                for _, games in tasks:
                    played += bool(games)
                    for game in games:
                        results.append(game)
                        if after_game(results) and not tasks.stopped:
                            stopped = "the SPRT decided"
                            tasks.stop()

            try:
                collect()
            except KeyboardInterrupt:
                print("interrupted: finishing the games in play", file=sys.stderr, flush=True)
                stopped = "interrupted"
                tasks.stop()
                collect()  # a second Ctrl-C leaves: the running pairs are cancelled and lost
    return results, Outcome(len(checked), len(pairs), played, stopped)
