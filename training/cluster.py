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
the project's policy, shared by `training.datagen` and `tools/match.py`:

* `connect` waits for a worker and refuses a cluster whose Python, Dask or
  serialisation packages differ from the client's;
* `check_workers` runs a probe on every worker present and refuses the run,
  naming each worker and what it has, if any fails the judge; a task can
  check the worker it runs on (workers that joined later) with
  `refuse_if`;
* `run_tasks` submits one task per item and yields results as they finish;
  leaving it (a decided SPRT, an error, Ctrl-C) cancels what is pending.
  A task whose worker dies is re-run by the scheduler on another worker
  (Dask's ``allowed-failures``, 3 by default); the client only ever sees
  one result per task, so it writes each output once.

`distributed` is imported only inside these functions: without the
`cluster` extra the module still loads (its errors are plain Python) and a
local run never pays for Dask.  Nothing under the engine's packages may
import it (tests/test_layout.py).
"""
from __future__ import annotations

import socket
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Iterator, TypeVar

if TYPE_CHECKING:
    from distributed import Client

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


def connect(address: str, *, timeout: float = 60.0) -> "Client":
    """A client of the scheduler at `address` (``tcp://host:port`` or a scheduler file), with a worker present.

    Refuses (ClusterError) a scheduler it cannot reach in `timeout` seconds,
    one with no worker within `timeout`, and a cluster whose Python, Dask,
    msgpack, cloudpickle or tornado differ from the client's: Dask itself
    only warns, but a task pickled by one version and unpickled by another
    fails in ways that are hard to read.  The caller closes the client
    (``with connect(...) as client``); closing never stops the cluster.
    """
    distributed = _distributed()
    try:
        if Path(address).is_file():
            client = distributed.Client(scheduler_file=address, timeout=timeout, set_as_default=False)
        else:
            client = distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as error:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {error}") from None
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


@contextmanager
def run_tasks(client: "Client", function: Callable[..., Result], items: Iterable[Item], *args: Any,
              label: Callable[[Item], Hashable] = str) -> Iterator[Iterator[tuple[Item, Result]]]:
    """One task `function(item, *args)` per item; yields (item, result) as tasks finish, in no set order.

    Leaving the ``with`` block, normally or by an exception (the caller's
    or a task's), cancels every task not yet finished.  A task's exception
    is raised in the caller; a task that killed its workers Dask's
    ``allowed-failures`` times becomes a ClusterError naming it.  `label`
    names a task in Dask's keys (and its dashboard); a random token keeps
    two clients' keys apart.
    """
    distributed = _distributed()
    token = uuid.uuid4().hex[:8]
    name = getattr(function, "__name__", "task")
    futures = {client.submit(function, item, *args, key=f"{name}-{label(item)}-{token}"): item for item in items}
    finished: set[Any] = set()

    def results() -> Iterator[tuple[Item, Result]]:
        for future, result in distributed.as_completed(futures, loop=client.loop, with_results=True):
            finished.add(future)
            future.release()  # the result is here: the cluster may forget it
            yield futures[future], result

    try:
        yield _killed_worker_is_cluster_error(results(), distributed.KilledWorker)
    finally:
        pending = [future for future in futures if future not in finished]
        if pending:
            client.cancel(pending)


def _killed_worker_is_cluster_error(results: Iterator[tuple[Item, Result]],
                                    killed: type[BaseException]) -> Iterator[tuple[Item, Result]]:
    try:
        yield from results
    except killed as error:
        raise ClusterError(f"a task killed every worker that ran it, giving up: {error}") from None
