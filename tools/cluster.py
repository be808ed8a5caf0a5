"""Scale-out over a Dask distributed cluster: connect, check the workers, run tasks, cancel the rest.

The project's embarrassingly parallel work (chunks of positions to label,
pairs of games to play) is farmed out through an existing distributed
engine rather than sockets of our own.  Dask distributed was chosen over
Ray on measurement (docs/cluster.md): about a third of the memory and start-up
time, a 2.5 MB wheel against 79 MB, and a worker is `pip install distributed`
plus the project's checkout.

A cluster is started with Dask's own commands (`dask scheduler`,
`dask worker ADDRESS --nthreads 1`, docs/cluster.md); a client names it by
address (``tcp://host:8786``) or by the scheduler file that
`dask scheduler --scheduler-file` wrote.  What this module adds to Dask is
the project's policy, shared by `training.datagen` and `tools.match`:

* `connect` waits for a worker and refuses a cluster whose Python, Dask or
  serialisation packages differ from the client's;
* `check_workers` runs a probe on every worker present and refuses the run,
  naming each worker and what it has, if any fails the judge; a task can
  check the worker it runs on (workers that joined later) with
  `refuse_if`;
* `run_tasks` submits one task per item and yields results as they finish;
  leaving it (an error, a second Ctrl-C) cancels what is pending.
  A task whose worker dies is re-run by the scheduler on another worker
  (Dask's ``allowed-failures``, 3 by default); the client only ever sees
  one result per task, so it writes each output once;
* `Tasks.stop` (a decided SPRT, a first Ctrl-C) cancels the tasks no worker
  has taken and tells those running, through `stop_requested`, to begin
  no new unit of work: what they already began still comes back;

Tasks are pickled by reference to their modules (`tools.match_game`,
`training.datagen`), so every worker and the scheduler run from a checkout
of the project (started in its root, or with it installed), as
docs/cluster.md says.

`distributed` is imported only inside these functions: without the
`cluster` extra the module still loads (its errors are plain Python) and a
local run never pays for Dask.  Nothing under the engine's packages may
import it (tests/test_layout.py).
"""
from __future__ import annotations

import socket
import sys
import threading
import uuid
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Generic, Hashable, Iterable, Iterator, TypeVar

if TYPE_CHECKING:
    from distributed import Client, Future

Item = TypeVar("Item")
Result = TypeVar("Result")
Probe = TypeVar("Probe")

#: The extra to install when `distributed` is missing.
INSTALL_HINT = "pip install -e '.[cluster]'"


class ClusterError(RuntimeError):
    """The cluster cannot do the run: unreachable, no workers, or a task that keeps killing workers."""


class WorkerRefused(ClusterError):
    """A worker lacks what the run needs, or has a different version of it."""

    def __init__(self, worker: str, reason: str) -> None:
        super().__init__(worker, reason)  # both in args, so that it pickles back to the client

    @property
    def worker(self) -> str:
        return self.args[0]

    @property
    def reason(self) -> str:
        return self.args[1]

    def __str__(self) -> str:
        return f"worker {self.worker} refused: {self.reason}"


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ClusterError(f"--cluster needs Dask distributed, the `cluster` extra: {INSTALL_HINT}") from None
    return distributed


#: Seconds `connect` waits for the scheduler, and then for a first worker.
CONNECT_TIMEOUT = 30.0
#: What `--cluster` takes, for the one-line refusal of anything else.
ADDRESS_FORMS = "tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786) nor the path of an existing scheduler file"


def address_problem(address: str) -> str | None:
    """Why `address` names no scheduler (None when it does): checked before anything waits on it.

    A scheduler is named by ``tcp://host:port`` or by the JSON file that
    ``dask scheduler --scheduler-file`` wrote; anything else (a mistyped
    file name, a bare host) would otherwise reach Dask, which waits and then
    fails with a parse error.
    """
    if Path(address).is_file():
        return None
    scheme, separator, rest = address.partition("://")
    host, colon, port = rest.rpartition(":")
    if separator and scheme in ("tcp", "tls") and colon and host and port.isdigit() and 0 < int(port) < 65536:
        return None
    return f"--cluster {address!r} is neither {ADDRESS_FORMS}"


def connect(address: str, *, timeout: float = CONNECT_TIMEOUT) -> "Client":
    """A client of the scheduler at `address` (``tcp://host:port`` or a scheduler file), with a worker present.

    Refuses (ClusterError) a scheduler it cannot reach in `timeout` seconds,
    one with no worker within `timeout`, and a cluster whose Python, Dask,
    msgpack, cloudpickle or tornado differ from the client's: Dask itself
    only warns, but a task pickled by one version and unpickled by another
    fails in ways that are hard to read.  The caller closes the client
    (``with connect(...) as client``); closing never stops the cluster.
    """
    problem = address_problem(address)
    if problem is not None:
        raise ClusterError(problem)
    distributed = _distributed()
    try:
        if Path(address).is_file():
            client = distributed.Client(scheduler_file=address, timeout=timeout, set_as_default=False)
        else:
            client = distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ClusterError(f"cannot reach the Dask scheduler at {address} within {timeout:.0f} s ({reason})") from None
    try:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except TimeoutError:
            raise ClusterError(f"no worker joined the scheduler at {address} within {timeout:.0f} s") from None
        try:
            client.get_versions(check=True)
        except ValueError as error:
            raise ClusterError(f"the cluster's packages differ from the client's: {error}") from None
    except BaseException:
        client.close()
        raise
    return client


def worker_address() -> str:
    """The address of the Dask worker running the caller, or the host name outside a worker."""
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return socket.gethostname()


def refuse_if(problem: str | None) -> None:
    """Inside a task: raise WorkerRefused naming this worker when `problem` is not None.

    Why tasks check too: `check_workers` sees the workers present when the
    run starts; one that joins later is checked by its first task.
    """
    if problem is not None:
        raise WorkerRefused(worker_address(), problem)


def check_workers(client: "Client", probe: Callable[..., Probe], judge: Callable[[Probe], str | None],
                  *args: Any) -> dict[str, Probe]:
    """`probe(*args)` on every worker; refuse the run if `judge` finds a problem with any.

    `judge(result)` returns None when the worker will do, else what is wrong
    ("has Stockfish 16, the client's teacher is Stockfish 15.1").  A probe
    that raises (the project not importable there, say) is a refusal too.
    Returns every worker's probe result by address.  Raises WorkerRefused
    naming the first refused worker, with every refusal in the message.
    """
    results = client.run(probe, *args, on_error="return")
    refused = []
    for address, result in sorted(results.items()):
        problem = (f"the probe failed: {type(result).__name__}: {result}" if isinstance(result, BaseException)
                   else judge(result))
        if problem is not None:
            refused.append((address, problem))
    if refused:
        worker = refused[0][0]
        raise WorkerRefused(worker, "; ".join(f"{address}: {problem}" if address != worker else problem
                                              for address, problem in refused))
    return results


#: Scheduler states of a task no worker holds yet: `Tasks.stop` cancels these.
UNSTARTED = frozenset({"released", "waiting", "queued", "no-worker"})

#: The stop flag's name of the task running in this thread of a worker (set by `_task`).
_running = threading.local()


def stop_requested() -> bool:
    """Inside a task of `run_tasks`: whether the client has called `Tasks.stop` (begin no new unit of work).

    Outside such a task, False.  One round trip to the scheduler, so a
    task asks between units of work (before each game of a pair), not in
    a tight loop.
    """
    name = getattr(_running, "stop", None)
    if name is None:
        return False
    return bool(_distributed().Event(name).is_set())


def _task(function: Callable[..., Result], stop: str, item: Item, *args: Any) -> Result:
    """What each task runs on its worker: `function(item, *args)`, with `stop_requested` reading flag `stop`."""
    _running.stop = stop
    try:
        return function(item, *args)
    finally:
        _running.stop = None


class Tasks(Generic[Item, Result]):
    """The tasks of one `run_tasks` block: an iterator of (item, result) as they finish, and `stop`.

    Not a generator on purpose: a Ctrl-C that lands while it waits leaves
    it usable, so the caller can `stop()` and go on collecting what the
    running tasks bring back.
    """

    def __init__(self, client: "Client", futures: "dict[Future, Item]", stop: str) -> None:
        distributed = _distributed()
        self._client, self._futures = client, futures
        self._flag = distributed.Event(stop, client=client)
        self._done = distributed.as_completed(futures, loop=client.loop, with_results=True)
        self._killed: type[BaseException] = distributed.KilledWorker
        self._finished: set[Any] = set()
        self.stopped = False
        self.cancelled: list[Item] = []  # by `stop`, never started

    def __iter__(self) -> "Tasks[Item, Result]":
        return self

    def __next__(self) -> tuple[Item, Result]:
        while True:
            try:
                future, result = next(self._done)
            except self._killed as error:
                raise ClusterError(f"a task killed every worker that ran it, giving up: {error}") from None
            if future.cancelled():  # by `stop`: counted there
                continue
            self._finished.add(future)
            future.release()  # the result is here: the cluster may forget it
            return self._futures[future], result

    def stop(self) -> int:
        """Start nothing more: cancel the tasks no worker holds, tell the running ones to stop; how many were cancelled.

        The flag is raised before the scheduler is asked where each task
        is, so a task that reaches a worker after the question sees it
        before its first unit of work: every unit begun belongs to a task
        that is not cancelled, and its result still comes through this
        iterator.  Tasks a worker held but had not begun come back at once,
        with no work done.
        """
        if self.stopped:
            return 0
        self.stopped = True
        self._flag.set()
        waiting = {future.key: future for future in self._futures if future not in self._finished and not future.done()}

        def states(keys: list[Any], dask_scheduler: Any) -> dict[Any, str]:  # by value: the scheduler needs no clone
            return {key: dask_scheduler.tasks[key].state for key in keys if key in dask_scheduler.tasks}

        where = self._client.run_on_scheduler(states, list(waiting))
        unstarted = [future for key, future in waiting.items() if where.get(key) in UNSTARTED]
        if unstarted:
            self._client.cancel(unstarted)
        self.cancelled.extend(self._futures[future] for future in unstarted)
        return len(unstarted)

    def _leave(self) -> None:
        """Cancel what is pending; the stop flag stays raised while a task may still be running, else is dropped."""
        pending = [future for future in self._futures if future not in self._finished and not future.cancelled()]
        if pending:
            with suppress(Exception):  # best effort: tasks Dask cannot interrupt then begin no new work
                self._flag.set()
            self._client.cancel(pending)
        elif self.stopped:
            self._flag.clear()  # every task is over: the scheduler may forget the flag


@contextmanager
def run_tasks(client: "Client", function: Callable[..., Result], items: Iterable[Item], *args: Any,
              label: Callable[[Item], Hashable] = str) -> Iterator[Tasks[Item, Result]]:
    """One task `function(item, *args)` per item; yields a `Tasks`: (item, result) as tasks finish, in no set order.

    Leaving the ``with`` block, normally or by an exception (the caller's
    or a task's), cancels every task not yet finished.  A task's exception
    is raised in the caller; a task that killed its workers Dask's
    ``allowed-failures`` times becomes a ClusterError naming it.  `label`
    names a task in Dask's keys (and its dashboard); a random token keeps
    two clients' keys apart.  `function` must be importable on the workers
    (or picklable by value); it may call `stop_requested`.
    """
    token = uuid.uuid4().hex[:8]
    name = getattr(function, "__name__", "task")
    stop = f"stop-{name}-{token}"
    futures = {client.submit(_task, function, stop, item, *args, key=f"{name}-{label(item)}-{token}"): item
               for item in items}
    tasks: Tasks[Item, Result] = Tasks(client, futures, stop)
    try:
        yield tasks
    finally:
        tasks._leave()
