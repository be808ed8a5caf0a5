"""Hardening: the engine's state and output survive bugs and bad tables."""
from __future__ import annotations

import argparse
import io
import os
import random
import signal
import subprocess
import threading
import time

import chess
import pytest

from search.alphabeta import AlphaBeta
from search.driver import Searcher
from search.position import Position
from search.timeman import Limits
from uci_engine.output import Output
from uci_engine.protocol import UciEngine


def test_illegal_move_in_the_transposition_table_is_never_played() -> None:
    """A key collision can hand the search a move from another position."""
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    searcher = Searcher(1)
    bogus = chess.Move.from_uci("a1a8")  # not legal here (own pawn in the way)
    assert bogus not in board.legal_moves
    key = Position(board.copy()).key
    for depth in range(1, 30):
        searcher.tt.store(key, depth, 0, 9999, bogus, 0)
    result = searcher.search(board, Limits(depth=3))
    assert result.best_move in board.legal_moves
    assert all(move != bogus for move in result.pv)


def test_output_lines_stay_whole_under_concurrent_writers() -> None:
    stream = io.StringIO()
    out = Output(stream)
    lines = {f"info string writer {w} line {i} " + "x" * 200 for w in range(8) for i in range(200)}

    def write(writer: int) -> None:
        for i in range(200):
            out.send(f"info string writer {writer} line {i} " + "x" * 200)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(stream.getvalue().splitlines()) == lines


def test_output_to_a_closed_pipe_is_silenced() -> None:
    class Broken(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

    out = Output(Broken())
    out.send("bestmove e2e4")  # must not raise
    assert out.closed


def test_search_exception_still_gives_a_legal_bestmove(monkeypatch) -> None:
    """A bug deep in the search is reported; the last reported best move is played."""
    stream = io.StringIO()
    engine = UciEngine(Output(stream))
    engine.handle("setoption name OwnBook value false")
    engine.handle("position startpos moves e2e4")
    calls = {"n": 0}
    real = AlphaBeta.quiescence

    def flaky(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 3000:
            raise RuntimeError("injected fault")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(AlphaBeta, "quiescence", flaky)
    engine.handle("go depth 8")
    engine._search_thread.join(timeout=60)
    output = stream.getvalue().splitlines()
    assert any("search error: RuntimeError: injected fault" in line for line in output)
    infos = [line for line in output if line.startswith("info depth") and " currmove " not in line]
    bestmoves = [line for line in output if line.startswith("bestmove")]
    assert len(bestmoves) == 1
    board = chess.Board()
    board.push_uci("e2e4")
    move = chess.Move.from_uci(bestmoves[0].split()[1])
    assert move in board.legal_moves
    assert infos, "the fault should come after at least one finished depth"
    assert move.uci() == infos[-1].split(" pv ")[1].split()[0]
    # And the engine keeps serving.
    monkeypatch.setattr(AlphaBeta, "quiescence", real)
    engine.handle("isready")
    assert stream.getvalue().splitlines()[-1] == "readyok"


SCRIPT = [
    "uci", "isready", "setoption name Hash value 8", "ucinewgame", "position startpos moves e2e4 e7e5",
    "go infinite", "isready", "stop", "position fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "go wtime 3000 btime 3000 winc 50 binc 50", "setoption name Clear Hash", "go depth 4", "bench 1", "go ponder",
    "ponderhit", "go movetime 50",
]


def _run_and_quit(engine_cmd, cwd, env, cut: int, pause: float, threads: int = 1) -> subprocess.CompletedProcess:
    proc = subprocess.Popen(engine_cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    for line in [f"setoption name Threads value {threads}"] + SCRIPT[:cut]:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    time.sleep(pause)
    proc.stdin.write("quit\n")
    proc.stdin.flush()
    try:
        _, err = proc.communicate(timeout=60)  # hang guard only
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"engine did not quit (cut after {cut} lines)")
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err)


@pytest.mark.parametrize("threads", [1, 2])
def test_quit_at_any_moment_exits_cleanly(engine_cmd, repo_root, engine_env, threads: int) -> None:
    rng = random.Random(7)
    for cut in sorted(rng.sample(range(len(SCRIPT) + 1), 8)):
        done = _run_and_quit(engine_cmd, repo_root, engine_env, cut, rng.uniform(0.0, 0.3), threads)
        assert done.returncode == 0, (cut, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("threads", [1, 2])
def test_gui_going_away_ends_the_engine_quietly(engine_cmd, repo_root, engine_env, threads: int) -> None:
    """Reading end of stdout closed: writes fail with EPIPE; no traceback, no hang, status 1."""
    proc = subprocess.Popen(engine_cmd, cwd=repo_root, env=engine_env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdout.close()
    try:
        proc.stdin.write(f"uci\nsetoption name Threads value {threads}\nisready\ngo depth 3\n")
        proc.stdin.flush()
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the engine may already be gone: that is the point
    try:
        code = proc.wait(timeout=60)  # hang guard only
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("engine hung after its stdout was closed")
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert "Traceback" not in err
    # Its first write (the reply to `uci`) meets the closed pipe: the loop stops serving
    # and the program ends with status 1 -- not killed by SIGPIPE, not an exception.
    assert code == 1, (code, err)
    assert "Exception ignored" not in err, err


def test_a_gui_that_stops_reading_stops_the_search_and_the_loop() -> None:
    """Under `go infinite` nobody will send `stop` once the GUI is gone: the broken
    output itself stops the search, and the loop serves no further command."""
    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

    engine = UciEngine(Output(Gone()))
    engine.handle("setoption name OwnBook value false")
    engine.handle("go infinite")
    search = engine._search_thread
    assert search is not None
    search.join(timeout=60)  # hang guard only: the first `info` line meets the closed pipe
    assert not search.is_alive()
    served = []

    def commands():
        for line in ["isready\n", "go infinite\n", "quit\n"]:
            served.append(line)
            yield line

    engine.run(commands())  # type: ignore[arg-type]
    assert served == ["isready\n"]


def test_ctrl_c_in_a_terminal_ends_the_engine_and_its_helpers_quietly(engine_cmd, repo_root, engine_env) -> None:
    """SIGINT reaches the whole process group: the main process ends the search and its
    helpers, and no helper dies mid-search printing a KeyboardInterrupt traceback."""
    proc = subprocess.Popen(engine_cmd, cwd=repo_root, env=engine_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    guard = threading.Timer(120, os.killpg, (proc.pid, signal.SIGKILL))  # hang guard for the reads below
    guard.start()
    try:
        proc.stdin.write("setoption name OwnBook value false\nsetoption name Threads value 2\ngo infinite\n")
        proc.stdin.flush()
        for line in proc.stdout:  # the helpers have started once the search reports
            if line.startswith("info depth 3"):
                break
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)  # hang guard only
    finally:
        guard.cancel()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert "KeyboardInterrupt" not in err and "Traceback" not in err, err
    for _ in range(100):  # helpers are gone soon after the main process
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError("a helper outlived the engine")


def test_huge_bad_input_is_not_echoed_back_in_full() -> None:
    stream = io.StringIO()
    engine = UciEngine(Output(stream))
    engine.handle("position fen " + "x" * 100_000)
    (line,) = stream.getvalue().splitlines()
    assert line.startswith("info string position: invalid FEN")
    assert len(line) < 500


def test_a_hash_size_that_cannot_be_allocated_leaves_a_working_table(monkeypatch) -> None:
    """`setoption Hash` beyond the machine's memory is reported; the old table keeps serving."""
    from search.tt import TranspositionTable

    stream = io.StringIO()
    engine = UciEngine(Output(stream))
    real_allocate = TranspositionTable._allocate

    def allocate(self, size: int) -> None:
        if size > 1 << 20:  # more than about 88 MB: pretend the memory is not there
            raise MemoryError
        real_allocate(self, size)

    monkeypatch.setattr(TranspositionTable, "_allocate", allocate)
    engine.handle("setoption name Hash value 1024")
    engine.handle("position startpos moves e2e4")
    engine.handle("go depth 3")
    engine._search_thread.join(timeout=60)
    output = stream.getvalue().splitlines()
    assert output[0] == "info string error in 'setoption': MemoryError:"
    assert not any("search error" in line for line in output), output
    assert [line for line in output if line.startswith("info depth")][-1].split()[2] == "3"
    table = engine.searcher.tt
    assert len(table.keys) == len(table.data) == table.mask + 1  # still the 16 MB table, whole
    assert engine.options["Hash"] == 16  # and the option says so


def _argparse_ignores_a_failed_help() -> bool:
    """Whether this Python's argparse swallows a failed write of its help.

    Later 3.11 releases do (3.11.7: `_print_message` ignores an OSError);
    3.11.2, Debian's, lets the BrokenPipeError through to the engine.
    """
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

    try:
        argparse.ArgumentParser(prog="pawnstorm").print_help(Closed())
    except BrokenPipeError:
        return False
    return True


@pytest.mark.parametrize("buffered", [False, True])
@pytest.mark.parametrize("command", [["perft", "3"], ["analyse", "--depth", "3"], ["--help"]])
def test_a_subcommand_whose_reader_left_ends_quietly(engine_cmd, repo_root, engine_env,
                                                    command: list[str], buffered: bool) -> None:
    """`pawnstorm analyse ... | head` with the reader gone: status 1, nothing on stderr,
    whether the first write fails (unbuffered) or only the last flush does (a pipe's default).
    (An argparse that swallows a failed write of `--help` leaves the status 0.)"""
    env = dict(engine_env)
    if buffered:
        env.pop("PYTHONUNBUFFERED", None)
    proc = subprocess.Popen(engine_cmd + command, cwd=repo_root, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    try:
        code = proc.wait(timeout=60)  # hang guard only
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("subcommand hung after its stdout was closed")
    err = proc.stderr.read()
    swallowed = command == ["--help"] and not buffered and _argparse_ignores_a_failed_help()
    assert code == (0 if swallowed else 1), (code, err)
    assert err == "", err
