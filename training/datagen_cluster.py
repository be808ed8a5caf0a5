"""`python -m training.datagen ... --cluster ADDRESS`: each chunk one task on a Dask cluster.

The worker makes a chunk with the local path's own function (`datagen.make_chunk`,
passed in by the caller, so that this module does not import `datagen`), into
a temporary directory of its own, and sends back the file's bytes and
counts; the client writes the file into `--out` under a temporary name,
then renames it, as the local path does.  So:

* a chunk's bytes are those a local run makes for the same seed (the same
  code made them, and `check_workers` refuses a worker whose code differs);
* a worker that dies mid-chunk leaves nothing in `--out`: the scheduler
  runs the chunk again elsewhere and the client writes it once;
* finished chunks are skipped exactly as in a local run (the caller's
  `pending` list).

Every worker present is checked before the first chunk is sent, and each
worker process checks itself before its first chunk (workers that join
later): it must start the Stockfish at `--stockfish` and read the same
`id name` as the client's teacher, hold the same source (a digest of the
packages that make chunks) and, for ``sf`` chunks, the same PGN file at
the same path.  `provenance.json` records per chunk the teacher that
labelled it and the host that ran it.
"""
from __future__ import annotations

import hashlib
import socket
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from tools import cluster
from training.chunks import write_atomically
from training.teacher import Teacher

if TYPE_CHECKING:  # annotations only: datagen imports this module
    from training.datagen import Settings, Task

#: How a chunk is made: (task, settings, teacher) -> (chunk name, counts), `datagen.make_chunk`.
MakeChunk = Callable[["Task", "Settings", Teacher], "tuple[str, dict[str, int]]"]

#: What makes a chunk: a difference here can change its bytes.
SOURCE_PACKAGES = ("training", "search", "eval", "opening_book")
SOURCE_SUFFIXES = (".py", ".bin", ".nnue")


@dataclass(frozen=True)
class Facts:
    """What a machine would make chunks with."""

    host: str
    teacher: str | None  # the Stockfish's `id name`; None when it did not start
    teacher_problem: str | None  # why it did not
    source: str  # digest of SOURCE_PACKAGES
    pgn: str | None  # digest of the run's PGN file, "missing", or None without one


def source_digest() -> str:
    """SHA-256 over the files of the packages that make chunks (names and contents)."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for package in SOURCE_PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.parts:
                digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def file_digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError:
        return "missing"


def facts(settings: Settings) -> Facts:
    """This machine's facts for `settings` (run on every worker, and on the client for reference)."""
    teacher_name = problem = None
    try:
        teacher = Teacher(settings.stockfish, settings.depth)
        teacher_name = teacher.name
        teacher.close()
    except (OSError, RuntimeError) as error:
        problem = f"{type(error).__name__}: {error}"
    return Facts(socket.gethostname(), teacher_name, problem, source_digest(),
                 file_digest(settings.pgn) if settings.pgn else None)


def judge(worker: Facts, client: Facts, settings: Settings) -> str | None:
    """Why `worker` may not make this run's chunks, or None."""
    where = f"on host {worker.host}"
    if worker.teacher is None:
        return f"{where}: no working Stockfish at {settings.stockfish} ({worker.teacher_problem})"
    if worker.teacher != client.teacher:
        return (f"{where}: the Stockfish at {settings.stockfish} is {worker.teacher!r}, "
                f"the client's teacher is {client.teacher!r}")
    if worker.source != client.source:
        return f"{where}: its Pawnstorm source differs from the client's (digest {worker.source} vs {client.source})"
    if worker.pgn != client.pgn:
        return (f"{where}: the PGN {settings.pgn} is {'missing' if worker.pgn == 'missing' else 'another file'} "
                f"(digest {worker.pgn} vs {client.pgn})")
    return None


# --- on the worker -------------------------------------------------------------

#: One chunk at a time per worker process: the teacher is one Stockfish
#: process, so two threads of one worker must not interleave.
_LOCK = threading.Lock()
_teachers: dict[tuple[str, int], Teacher] = {}


@dataclass(frozen=True)
class Made:
    """A finished chunk on its way to the client."""

    file: str  # the file's name, as the local path names it
    data: bytes
    counts: dict[str, int | str]


def make_chunk(task: Task, settings: Settings, reference: Facts, make: MakeChunk) -> Made:
    """The task: one chunk, made by the local path's `make` in a directory of the worker's own.

    `reference` is the client's `Facts`, which this worker process must
    match before its first chunk.
    """
    with _LOCK:
        key = (settings.stockfish, settings.depth)
        if key not in _teachers:
            cluster.refuse_if(judge(facts(settings), reference, settings))  # a worker that joined after the check
            _teachers[key] = Teacher(settings.stockfish, settings.depth)
        teacher = _teachers[key]
        with tempfile.TemporaryDirectory(prefix="pawnstorm-chunk-") as directory:
            name, counts = make(task, replace(settings, out=Path(directory)), teacher)
            (path,) = Path(directory).iterdir()
            data = path.read_bytes()
    return Made(path.name, data, {**counts, "teacher": teacher.name, "host": socket.gethostname()})


# --- on the client -------------------------------------------------------------

@contextmanager
def chunks(address: str, settings: Settings, pending: list[Task],
           make: MakeChunk) -> Iterator[Iterator[tuple[str, dict[str, int | str]]]]:
    """Connect, check every worker, then yield (chunk name, counts) as the cluster finishes chunks.

    Each chunk's file is in `settings.out` by the time it is yielded.
    Raises cluster.ClusterError (WorkerRefused naming the worker) before the
    first chunk is sent when the cluster cannot do the run; leaving the
    block early cancels the chunks still pending.
    """
    reference = facts(settings)
    with cluster.connect(address) as client:
        cluster.check_workers(client, facts, lambda worker: judge(worker, reference, settings), settings)
        with cluster.run_tasks(client, make_chunk, pending, settings, reference, make,
                               label=lambda task: task.name) as results:
            yield (_written(settings.out, task, made) for task, made in results)


def _written(out: Path, task: Task, made: Made) -> tuple[str, dict[str, int | str]]:
    write_atomically(out / made.file, made.data)
    return task.name, made.counts
