"""Lazy SMP: helper processes search the same root and share one transposition table.

Python threads share one interpreter lock, so a second core needs a second
process.  Each helper is a whole searcher (its own move ordering tables, its
own copy of the net) attached to the main process's table in shared memory
(`search.shared_tt`).  On every `go` all of them search the position by
iterative deepening; what a helper proves lands in the table, where the main
search finds it as hash moves and cutoffs: that is all of Lazy SMP.  The main
search owns the clock, the `info` lines and the best move; helpers only stop
when told, so they need no clock of their own.

Helpers live from `Threads` > 1 until `Threads` 1, `quit`, end of input or
the main process's death: a helper that finds its pipe closed or its parent
gone exits by itself, so none is left behind as an orphan.
"""
from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Callable

import chess

from eval.nnue import Net, from_bytes
from search.alphabeta import CHECK_EVERY
from search.driver import Iteration, SearchResult, Searcher
from search.features import Features
from search.shared_tt import SharedTranspositionTable
from search.tablebase import Tablebases
from search.timeman import Limits
from search.tt import TranspositionTable
from search.types import EXACT

#: The most search processes (main and helpers) the `Threads` option and `bench --threads` accept.
MAX_THREADS = 512
#: How long a fresh helper may take to start (a spawned interpreter imports
#: the engine: about a second on an idle machine).
HELPER_START_S = 60.0
#: How long the main process waits for a stopped helper to say it is done
#: before it counts that helper as hung (a helper stops within CHECK_EVERY
#: nodes, about a millisecond; start-up of a fresh one takes about a second).
HELPER_REPLY_S = 10.0


#: Which depths helper k passes over: it skips `depth` when
#: ((depth + game ply + SKIP_PHASE[i]) // SKIP_SIZE[i]) is odd, i = k mod 20.
#: The pattern of Stockfish 8-10's Lazy SMP: helper 1 searches every other
#: depth, so while the main search works on depth d it is already on d + 1;
#: later helpers skip in longer, shifted blocks, spreading the processes over
#: the next few depths instead of all repeating one.
SKIP_SIZE = (1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4)
SKIP_PHASE = (0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7)
#: Shared words per helper: nodes, and its deepest finished depth's depth, score and first two moves.
SLOT_WORDS = 5
NODES, DEPTH, SCORE, MOVE, REPLY = range(SLOT_WORDS)


def skips(helper: int, ply: int) -> Callable[[int], bool]:
    """The depths helper number `helper` (0 = the first helper) passes over at game ply `ply`."""
    size, phase = SKIP_SIZE[helper % 20], SKIP_PHASE[helper % 20]
    return lambda depth: (depth + ply + phase) // size % 2 == 1


def _move_code(move: chess.Move | None) -> int:
    return 0 if move is None else 1 + move.from_square + 64 * move.to_square + 4096 * (move.promotion or 0)


def _move_of(code: int) -> chess.Move | None:
    code -= 1
    return None if code < 0 else chess.Move(code % 64, code // 64 % 64, code // 4096 or None)


@dataclass(frozen=True)
class HelperSetup:
    """What a helper must know to search as the main process does."""

    net: bytes | None
    features: Features
    syzygy_path: str = ""
    gaviota_path: str = ""
    probe_limit: int = 7
    probe_depth: int = 1


# --- the helper process ------------------------------------------------------------

class _StopWatch:
    """The helper's stop flag: set by the main process, or by the main process's death.

    The search asks `is_set()` once every CHECK_EVERY nodes; that is also
    where the helper publishes its node count for the main process's `info`.
    """

    def __init__(self, flag: Any, parent: int, shared: Any, slot: int) -> None:
        self.flag, self.parent, self.shared, self.base = flag, parent, shared, slot * SLOT_WORDS
        self.calls = 0

    def is_set(self) -> bool:
        self.calls += 1
        self.shared[self.base + NODES] = self.calls * CHECK_EVERY
        return self.flag[0] != 0 or os.getppid() != self.parent

    def finished(self, iteration: Iteration) -> None:
        """Publish a finished depth (exact score, whole line) for the main process to weigh."""
        if iteration.bound != EXACT or iteration.partial or iteration.multipv != 1 or not iteration.pv:
            return
        pv = iteration.pv
        shared, base = self.shared, self.base
        shared[base + DEPTH] = 0  # readers skip a slot while it is half written
        shared[base + SCORE] = iteration.score
        shared[base + MOVE] = _move_code(pv[0])
        shared[base + REPLY] = _move_code(pv[1] if len(pv) > 1 else None)
        shared[base + DEPTH] = iteration.depth


def _apply(searcher: Searcher, setup: HelperSetup) -> None:
    searcher.net = from_bytes(setup.net, "<main process's net>") if setup.net is not None else None
    searcher.features = setup.features
    if searcher.tablebases is not None:
        searcher.tablebases.close()
    searcher.tablebases = None
    if setup.syzygy_path or setup.gaviota_path:
        tablebases = Tablebases()
        tablebases.set_syzygy_path(setup.syzygy_path)
        tablebases.set_gaviota_path(setup.gaviota_path)
        tablebases.probe_limit, tablebases.probe_depth = setup.probe_limit, setup.probe_depth
        searcher.tablebases = tablebases if tablebases.max_pieces else None


def _attach_or_private(name: str) -> TranspositionTable:
    """The main process's table; if it is already gone (replaced meanwhile), a small one of our own."""
    try:
        return SharedTranspositionTable(name=name)
    except (FileNotFoundError, ValueError):
        return TranspositionTable(1)


def helper_main(slot: int, conn: Connection, stop: Any, shared: Any, table_name: str, parent: int) -> None:
    """A helper's life: attach to the table, then serve `go` until told to quit or orphaned."""
    # Ctrl-C in a terminal reaches the whole process group; the main process
    # handles it and ends its helpers, which must not die mid-search with a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    searcher = Searcher(1)
    table = searcher.tt = _attach_or_private(table_name)
    watch = _StopWatch(stop, parent, shared, slot)
    try:
        conn.send(("ready",))
        serving = True
    except OSError:
        serving = False  # the main process is already gone
    while serving:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break  # the main process is gone
        kind = message[0]
        if kind == "quit":
            break
        if kind == "table":
            if isinstance(table, SharedTranspositionTable):
                table.close()
            table = searcher.tt = _attach_or_private(message[1])
        elif kind == "setup":
            _apply(searcher, message[1])
        elif kind == "clear":
            searcher.orderer.clear()
        elif kind == "go":
            _, fen, chess960, moves, generation, limits = message
            board = chess.Board(fen, chess960=chess960)
            for move in moves:
                board.push(chess.Move.from_uci(move))
            table.generation = (generation - 1) & 255  # the search steps it to the main's
            watch.calls = 0
            searcher.skip_depth = skips(slot, board.ply())
            result = searcher.search(board, limits, stop=watch, on_iteration=watch.finished)  # type: ignore[arg-type]
            shared[slot * SLOT_WORDS + NODES] = result.nodes
            try:
                conn.send(("done", result.depth, result.nodes))
            except OSError:
                break  # the main process is gone
    if isinstance(table, SharedTranspositionTable):
        table.close()


# --- the main process's side ---------------------------------------------------------

@dataclass
class _Helper:
    process: multiprocessing.process.BaseProcess
    conn: Connection
    busy: bool = False


class HelperPool:
    """The helper processes, their pipes, one stop flag and what they publish.

    The stop flag is a plain shared word, not a `multiprocessing.Event`: an
    Event takes a lock even to be read, and a helper killed while holding it
    would hang the engine at its next `go`.
    """

    def __init__(self, count: int, table_name: str) -> None:
        context = multiprocessing.get_context("spawn")  # fork is unsafe beside the search thread
        self.stop_flag = context.RawArray("q", 1)
        self.shared = context.RawArray("q", max(1, count) * SLOT_WORDS)
        self.problems: list[str] = []
        self.helpers: list[_Helper] = []
        for slot in range(count):
            mine, theirs = context.Pipe()
            process = context.Process(target=helper_main, name=f"pawnstorm-helper-{slot + 1}", daemon=True,
                                      args=(slot, theirs, self.stop_flag, self.shared, table_name, os.getpid()))
            process.start()
            theirs.close()
            self.helpers.append(_Helper(process, mine))
        for helper in list(self.helpers):  # attached to the table before anyone may replace it
            try:
                if helper.conn.poll(HELPER_START_S) and helper.conn.recv() == ("ready",):
                    continue
            except (EOFError, OSError):
                pass
            self._drop(helper, "did not start")

    def __len__(self) -> int:
        return len(self.helpers)

    def broadcast(self, message: tuple) -> None:
        for helper in list(self.helpers):
            self._send(helper, message)

    def go(self, message: tuple) -> None:
        """Start every live helper on the same root (after the last search's helpers are done)."""
        self.wait_done()
        self.stop_flag[0] = 0
        for word in range(len(self.shared)):
            self.shared[word] = 0
        for helper in list(self.helpers):
            if self._send(helper, message):
                helper.busy = True

    def stop(self) -> None:
        """Tell the helpers to stop; does not wait (`bestmove` must not)."""
        self.stop_flag[0] = 1

    def wait_done(self, timeout: float = HELPER_REPLY_S) -> None:
        """Wait until every helper has finished its search; a hung or dead one is dropped."""
        self.stop_flag[0] = 1
        for helper in list(self.helpers):
            if not helper.busy:
                continue
            try:
                if helper.conn.poll(timeout):
                    helper.conn.recv()
                    helper.busy = False
                    continue
            except (EOFError, OSError):
                pass
            self._drop(helper, "did not finish its search")

    def nodes(self) -> int:
        shared = self.shared
        return sum(shared[base + NODES] for base in range(0, len(shared), SLOT_WORDS))

    def deepest(self) -> tuple[int, int, chess.Move, chess.Move | None] | None:
        """The deepest depth a helper finished in this search: (depth, score, move, reply), or None."""
        best = None
        shared = self.shared
        for base in range(0, len(shared), SLOT_WORDS):
            depth, score, move, reply = (shared[base + DEPTH], shared[base + SCORE], shared[base + MOVE],
                                         shared[base + REPLY])
            if depth and shared[base + DEPTH] == depth and (best is None or depth > best[0]):
                found = _move_of(move)
                if found is not None:
                    best = (depth, score, found, _move_of(reply))
        return best

    def close(self) -> None:
        """Stop and end every helper: politely, then by force."""
        self.stop_flag[0] = 1
        for helper in self.helpers:
            try:
                helper.conn.send(("quit",))
            except (OSError, ValueError):
                pass
        for helper in self.helpers:
            helper.process.join(timeout=2)
            if helper.process.is_alive():
                helper.process.kill()
                helper.process.join(timeout=2)
            helper.conn.close()
        self.helpers = []

    def _send(self, helper: _Helper, message: tuple) -> bool:
        if not helper.process.is_alive():
            self._drop(helper, f"stopped (exit code {helper.process.exitcode})")
            return False
        try:
            helper.conn.send(message)
            return True
        except (OSError, ValueError):
            self._drop(helper, "closed its pipe")
            return False

    def _drop(self, helper: _Helper, why: str) -> None:
        self.helpers.remove(helper)
        helper.process.join(timeout=0.2)
        if helper.process.exitcode is not None:
            why = f"stopped (exit code {helper.process.exitcode})"
        else:
            helper.process.kill()
        helper.conn.close()
        self.problems.append(f"search helper {helper.process.name} {why}; searching with "
                             f"{len(self.helpers) + 1} process{'es' if self.helpers else ''}")


class ParallelSearcher(Searcher):
    """A `Searcher` that, with `threads` > 1, searches with helper processes (Lazy SMP).

    With one thread it is the plain `Searcher`, node for node: the list-based
    table, no helper, no extra work.
    """

    def __init__(self, hash_mb: int = 16, features: Features = Features(), net: Net | None = None) -> None:
        super().__init__(hash_mb, features, net)
        self.hash_mb = hash_mb
        self.threads = 1
        self.pool: HelperPool | None = None
        self._sent_setup: HelperSetup | None = None
        self._net_bytes: tuple[Net | None, bytes | None] = (None, None)

    def set_threads(self, threads: int) -> None:
        """Start or end helper processes so that `threads` processes search.

        Everything learnt is forgotten, as after `ucinewgame`: the table is a
        new one, and the ordering tables start afresh with it.
        """
        threads = max(1, threads)
        if threads == self.threads:
            return
        self.close()
        self.orderer.clear()
        self.threads = threads
        if threads > 1:
            self.tt = SharedTranspositionTable(self.hash_mb)
            self.pool = HelperPool(threads - 1, self.tt.name)
        else:
            self.tt = TranspositionTable(self.hash_mb)

    def resize_hash(self, megabytes: int) -> None:
        """`Hash`: the whole table, shared by every process, in `megabytes`."""
        self.hash_mb = megabytes
        if self.pool is not None:
            self.pool.wait_done()  # no helper searches while its table changes
        self.tt.resize(megabytes)
        if self.pool is not None and isinstance(self.tt, SharedTranspositionTable):
            self.pool.broadcast(("table", self.tt.name))

    def clear(self) -> None:
        if self.pool is not None:
            self.pool.wait_done()  # first: a helper still finishing its search would write into the cleared table
        super().clear()
        if self.pool is not None:
            self.pool.broadcast(("clear",))

    def take_problems(self) -> list[str]:
        """What went wrong with helpers since the last call, for the user."""
        if self.pool is None:
            return []
        problems, self.pool.problems = self.pool.problems, []
        return problems

    def search(self, board: chess.Board, limits: Limits | None = None, *,
               on_iteration: Callable[[Iteration], None] | None = None, helpers: bool = True,
               **options: Any) -> SearchResult:
        """`Searcher.search`, with the helpers searching too unless `helpers` is False."""
        pool = self.pool
        if pool is None or not len(pool) or not helpers:
            return super().search(board, limits, on_iteration=on_iteration, **options)
        limits = limits or Limits()
        self._send_setup(pool)
        root = board.root()
        pool.go(("go", root.fen(), board.chess960, [move.uci() for move in board.move_stack],
                 (self.tt.generation + 1) & 255, Limits(depth=limits.depth, searchmoves=limits.searchmoves)))
        report = on_iteration
        if on_iteration is not None:
            def report(iteration: Iteration) -> None:
                on_iteration(dataclasses.replace(iteration, nodes=iteration.nodes + pool.nodes()))
        try:
            result = super().search(board, limits, on_iteration=report, **options)
        finally:
            pool.stop()
        result.nodes += pool.nodes()
        if options.get("multipv", 1) == 1:
            self._take_deeper(result, pool, board)
        return result

    @staticmethod
    def _take_deeper(result: SearchResult, pool: HelperPool, board: chess.Board) -> None:
        """A helper that finished a deeper depth than the main search is better founded: play its move."""
        deepest = pool.deepest()
        if deepest is None or deepest[0] <= result.depth or not board.is_legal(deepest[2]):
            return
        depth, score, move, reply = deepest
        board.push(move)
        legal_reply = reply is not None and board.is_legal(reply)
        board.pop()
        result.depth, result.score, result.best_move = depth, score, move
        result.pv = [move, reply] if legal_reply else [move]
        result.ponder_move = reply if legal_reply else None

    def close(self) -> None:
        """End the helpers and give the shared table back (Threads 1, quit)."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None
            self._sent_setup = None
        if isinstance(self.tt, SharedTranspositionTable):
            self.tt.close()
            self.tt = TranspositionTable(self.hash_mb)

    def _serialised_net(self) -> bytes | None:
        """The net's file bytes, computed once per net."""
        if self._net_bytes[0] is not self.net:
            self._net_bytes = (self.net, self.net.to_bytes() if self.net is not None else None)
        return self._net_bytes[1]

    def _send_setup(self, pool: HelperPool) -> None:
        tablebases = self.tablebases
        setup = HelperSetup(
            net=self._serialised_net(),
            features=self.features,
            syzygy_path=tablebases.syzygy_path if tablebases is not None else "",
            gaviota_path=tablebases.gaviota_path if tablebases is not None else "",
            probe_limit=tablebases.probe_limit if tablebases is not None else 7,
            probe_depth=tablebases.probe_depth if tablebases is not None else 1,
        )
        if setup != self._sent_setup:
            pool.broadcast(("setup", setup))
            self._sent_setup = setup
