"""Lazy SMP over processes: helpers start and end with `Threads`, search, and never outlive the engine."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

import chess
import pytest

from search.driver import SearchResult, Searcher
from search.smp import ParallelSearcher, skips
from search.timeman import Limits
from search.types import TB_WIN_BOUND
from tests.uci_process import RawEngine

LINUX_PROC = Path("/proc/self/stat").exists()
needs_proc = pytest.mark.skipif(not LINUX_PROC, reason="reads the process table from /proc (Linux only)")
SYZYGY_DIR = Path(__file__).resolve().parent / "data" / "syzygy"
#: CPU time (clock ticks, 1/100 s on Linux) each helper must burn to count as searching.
BUSY_TICKS = 10
#: How long a helper's CPU time must stand still to count as stopped.
STILL_S = 0.5


def helper_pids(parent: int) -> set[int]:
    """Processes whose parent is `parent` and that run a multiprocessing helper."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"spawn_main" in cmdline:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def cpu_ticks(pid: int) -> int:
    """CPU time `pid` has used so far, in clock ticks (utime + stime of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def searching(pids: set[int]) -> bool:
    """Every helper burns CPU, as only a searching one does (an idle helper waits on its pipe)."""
    start = {pid: cpu_ticks(pid) for pid in pids}
    return wait_until(lambda: all(cpu_ticks(pid) >= start[pid] + BUSY_TICKS for pid in pids))


def stopped(pids: set[int]) -> bool:
    """Every helper's CPU time stands still for STILL_S: none is searching any more."""
    def still() -> bool:
        before = {pid: cpu_ticks(pid) for pid in pids}
        time.sleep(STILL_S)
        return all(cpu_ticks(pid) == before[pid] for pid in pids)
    return wait_until(still)


def wait_until(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def set_threads(engine: RawEngine, threads: int) -> set[int]:
    """`setoption Threads`; the helper processes' pids once all of them are up."""
    engine.send(f"setoption name Threads value {threads}")
    engine.sync()
    assert wait_until(lambda: len(helper_pids(engine.proc.pid)) == threads - 1)
    return helper_pids(engine.proc.pid)


def all_gone(pids: set[int]) -> bool:
    return wait_until(lambda: not any(alive(pid) for pid in pids))


@contextlib.contextmanager
def parallel(threads: int):
    """A ParallelSearcher with `threads` processes, its helpers ended afterwards."""
    searcher = ParallelSearcher(16)
    searcher.set_threads(threads)
    try:
        yield searcher
    finally:
        searcher.close()


@pytest.fixture
def engine(engine_cmd, repo_root, engine_env, tmp_path):
    engine = RawEngine(engine_cmd, repo_root, engine_env, tmp_path / "stderr.txt")
    engine.send("uci")
    engine.expect("uciok")
    yield engine
    engine.close()


# --- in process ---------------------------------------------------------------------


def test_one_thread_is_the_plain_searcher_node_for_node() -> None:
    board = chess.Board("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N2N2/PP2BPPP/R2QKB1R w KQ - 0 9")
    plain = Searcher(16).search(board, Limits(depth=5))
    searcher = ParallelSearcher(16)
    try:
        assert searcher.search(board, Limits(depth=5)).nodes == plain.nodes
        searcher.set_threads(2)
        searcher.set_threads(1)  # back to the list table, empty
        assert searcher.pool is None
        assert searcher.search(board, Limits(depth=5)).nodes == plain.nodes
    finally:
        searcher.close()


def test_helpers_search_and_their_nodes_are_counted() -> None:
    reports = []
    with parallel(2) as searcher:
        for hash_mb in (16, 4):  # after a Hash change the helper searches the new table
            searcher.resize_hash(hash_mb)
            result = searcher.search(chess.Board(), Limits(depth=6), on_iteration=reports.append)
            searcher.pool.wait_done()
            helper_nodes = searcher.pool.nodes()
            assert result.best_move in chess.Board().legal_moves and result.depth == 6
            assert helper_nodes > 0
            assert result.nodes >= reports[-1].nodes >= helper_nodes
            assert searcher.tt.mask + 1 == hash_mb * 1024 * 1024 // 16
        assert searcher.take_problems() == []


def test_helper_nodes_grow_while_searching_and_freeze_once_stopped() -> None:
    with parallel(2) as searcher:
        stop = threading.Event()
        results = []
        thread = threading.Thread(target=lambda: results.append(
            searcher.search(chess.Board(), Limits(infinite=True), stop=stop)))
        thread.start()
        try:
            # Searching: the helper's published node count moves, and keeps moving.
            assert wait_until(lambda: searcher.pool.nodes() > 0)
            seen = searcher.pool.nodes()
            assert wait_until(lambda: searcher.pool.nodes() > seen)
        finally:
            stop.set()
            thread.join(timeout=60)  # (a guard: the answer does not wait for the helpers, test_stop_reaches_the_helpers)
        assert not thread.is_alive() and results[0].best_move in chess.Board().legal_moves
        # Stopped: every helper reports its search done, and its count no longer moves.
        searcher.pool.wait_done()
        assert searcher.take_problems() == []
        frozen = searcher.pool.nodes()
        time.sleep(STILL_S)
        assert searcher.pool.nodes() == frozen > seen


def test_without_helpers_the_helpers_stay_idle() -> None:
    with parallel(2) as searcher:
        searcher.search(chess.Board(), Limits(depth=4), helpers=False)
        assert searcher.pool.nodes() == 0


def test_a_dead_helper_is_reported_and_the_search_carries_on() -> None:
    with parallel(3) as searcher:
        victim = searcher.pool.helpers[0].process
        victim.kill()
        victim.join(timeout=10)
        result = searcher.search(chess.Board(), Limits(depth=5))
        assert result.best_move in chess.Board().legal_moves
        problems = searcher.take_problems()
        assert len(problems) == 1 and victim.name in problems[0] and "2 processes" in problems[0]
        assert len(searcher.pool) == 1


# --- the engine as a process ----------------------------------------------------------------


@needs_proc
def test_threads_option_starts_and_ends_helper_processes(engine) -> None:
    pid = engine.proc.pid
    set_threads(engine, 3)
    engine.send("position startpos moves e2e4")
    engine.send("go depth 5")
    engine.bestmove(chess.Board(fen="rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"))
    set_threads(engine, 1)
    helpers = set_threads(engine, 2)
    engine.send("quit")
    assert engine.wait_exit() == 0
    assert all_gone(helpers)


@needs_proc
def test_end_of_input_ends_the_helpers_too(engine) -> None:
    helpers = set_threads(engine, 2)
    engine.send("go infinite")
    assert searching(helpers)
    engine.proc.stdin.close()
    assert engine.wait_exit() == 0
    assert all_gone(helpers)


@needs_proc
def test_helpers_do_not_outlive_a_killed_engine(engine) -> None:
    helpers = set_threads(engine, 3)
    engine.send("go infinite")
    assert searching(helpers)
    os.kill(engine.proc.pid, signal.SIGKILL)
    engine.proc.wait(timeout=10)
    assert all_gone(helpers)


@needs_proc
def test_a_killed_helper_is_named_and_the_engine_keeps_playing(engine) -> None:
    (helper,) = set_threads(engine, 2)
    os.kill(helper, signal.SIGKILL)
    for _ in range(2):
        engine.send("go depth 4")  # not `movetime`: from the start position that is a book move
        engine.bestmove(chess.Board())
    reported = [line for line in engine.transcript if line.startswith("<< info string search helper")]
    assert len(reported) == 1 and "stopped" in reported[0]


@needs_proc
def test_stop_reaches_the_helpers(engine) -> None:
    helpers = set_threads(engine, 2)
    assert stopped(helpers)  # started and waiting
    for _ in range(3):
        engine.send("go infinite")
        assert searching(helpers)
        # `bestmove` does not wait for the helpers: with one of them frozen, it still comes.
        frozen = min(helpers)
        os.kill(frozen, signal.SIGSTOP)
        try:
            engine.send("stop")
            move, before = engine.bestmove(chess.Board())
        finally:
            os.kill(frozen, signal.SIGCONT)
        assert [line for line in before if line.startswith("info depth")]
        assert stopped(helpers)  # no further command needed: the stop reached them
    engine.send("go depth 4")  # a new search starts once every helper has stopped
    engine.bestmove(chess.Board())
    assert stopped(helpers) and helper_pids(engine.proc.pid) == helpers


# --- diversity and the deeper helper ------------------------------------------------------


@pytest.mark.parametrize(("helper", "ply", "searched"), [
    (0, 0, [1, 2, 4, 6, 7]),  # the first helper: every other depth, the last one always
    (0, 1, [1, 3, 5, 7]),
    (2, 0, [1, 4, 5, 7]),  # blocks of two
])
def test_helpers_skip_depths_in_the_stockfish_pattern(helper: int, ply: int, searched: list[int]) -> None:
    searcher = Searcher(1)
    searcher.skip_depth = skips(helper, ply)
    depths = []
    searcher.search(chess.Board(), Limits(depth=7), on_iteration=lambda iteration: depths.append(iteration.depth))
    assert depths == searched


class _Pool:
    def __init__(self, deepest):
        self._deepest = deepest

    def deepest(self):
        return self._deepest


def _result(depth: int) -> SearchResult:
    return SearchResult(chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5"), 20, depth, 1000, 5.0,
                        [chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5")])


def test_a_deeper_helper_result_is_played_and_a_shallower_or_illegal_one_is_not() -> None:
    board = chess.Board()
    d4, d5, c5 = (chess.Move.from_uci(uci) for uci in ("d2d4", "d7d5", "c7c5"))
    result = _result(6)
    ParallelSearcher._take_deeper(result, _Pool((7, 35, d4, d5)), board)
    assert (result.best_move, result.ponder_move, result.depth, result.score, result.pv) == (d4, d5, 7, 35, [d4, d5])
    for deepest in [(6, 99, d4, d5), (9, 99, c5, None), None]:  # not deeper; illegal (a black move); none
        result = _result(6)
        ParallelSearcher._take_deeper(result, _Pool(deepest), board)
        assert result.best_move == chess.Move.from_uci("e2e4") and result.depth == 6
    result = _result(6)
    ParallelSearcher._take_deeper(result, _Pool((8, 10, d4, c5.from_square and chess.Move.from_uci("d4d5"))), board)
    assert result.best_move == d4 and result.ponder_move is None and result.pv == [d4]
    assert board == chess.Board()


def test_helpers_publish_their_deepest_finished_depth() -> None:
    with parallel(2) as searcher:
        def hold_for_the_helper(iteration) -> None:
            # The main search holds at its first depth until the helper has published its
            # second, so a helper slow to start on a loaded machine is still seen.
            if iteration.depth == 1:
                assert wait_until(lambda: (searcher.pool.deepest() or (0,))[0] >= 2)

        searcher.search(chess.Board(), Limits(depth=5), on_iteration=hold_for_the_helper)
        searcher.pool.wait_done()
        depth, score, move, reply = searcher.pool.deepest()
        # The main search stops the helper when it is done: somewhere past its first depths.
        assert 2 <= depth <= 5 and move in chess.Board().legal_moves and abs(score) < 300


# --- the other search features keep working with helpers --------------------------------------


def test_multipv_and_searchmoves_with_helpers() -> None:
    with parallel(2) as searcher:
        board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
        result = searcher.search(board, Limits(depth=4), multipv=3)
        assert len(result.lines) == 3 and len({line.pv[0] for line in result.lines}) == 3
        assert [line.multipv for line in result.lines] == [1, 2, 3]
        result = searcher.search(board, Limits(depth=4, searchmoves=["a2a3", "h2h3"]))
        assert result.best_move.uci() in ("a2a3", "h2h3")


def test_helpers_open_the_main_process_tablebases() -> None:
    syzygy = SYZYGY_DIR
    from search.tablebase import Tablebases
    tablebases = Tablebases()
    tablebases.set_syzygy_path(str(syzygy))
    searcher = ParallelSearcher(16)
    searcher.tablebases = tablebases
    searcher.set_threads(2)
    try:
        board = chess.Board("8/8/8/4k3/8/8/8/R3K3 w - - 0 1")
        reports = []
        result = searcher.search(board, Limits(depth=6), on_iteration=reports.append)
        assert reports[-1].score > TB_WIN_BOUND  # the tables' verdict: won
        after = board.copy()
        after.push(result.best_move)
        assert tablebases.probe_wdl(after) == -2  # the move keeps the win
        assert searcher._sent_setup is not None and searcher._sent_setup.syzygy_path == str(syzygy)
        searcher.pool.wait_done()
        assert searcher.pool.nodes() > 0 and searcher.take_problems() == []
    finally:
        searcher.close()
        tablebases.close()
