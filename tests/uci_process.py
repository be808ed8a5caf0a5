"""Drive an engine process over plain pipes, with a timeout on every read.

A reader thread feeds stdout lines into a queue, so a hung engine fails the
test instead of hanging it.  Shared by the client tests and the executable test.
"""
from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable

import chess
import chess.engine
import pytest

READ_GUARD = 30.0
#: Hang guard for one whole test that drives a python-chess engine (SimpleEngine
#: has no timeout of its own for depth/node limits): the process is killed, the
#: pending call raises and the test fails.
TEST_GUARD = 90.0


class RawEngine:
    """The engine over plain pipes; a reader thread feeds stdout lines into a queue."""

    #: What the process is called in failure messages.
    name = "engine"

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str], stderr_path: Path) -> None:
        self._stderr_path = stderr_path
        self._stderr = open(stderr_path, "w")
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, text=True, bufsize=1)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.transcript: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\r\n"))
        self.lines.put(None)

    def send(self, command: str) -> None:
        self.transcript.append(f">> {command}")
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def context(self) -> str:
        return "\n".join(self.transcript[-80:]) + f"\n--- stderr ---\n{self.stderr()}"

    def stderr(self) -> str:
        self._stderr.flush()
        return self._stderr_path.read_text(errors="replace")

    def expect(self, prefix: str, timeout: float = READ_GUARD) -> tuple[str, list[str]]:
        """The first line equal to / starting with `prefix` and the lines before it."""
        return self.expect_where(lambda line: line == prefix or line.startswith(prefix + " "), repr(prefix), timeout)

    def expect_where(self, accept: Callable[[str], bool], what: str,
                     timeout: float = READ_GUARD) -> tuple[str, list[str]]:
        """The first line `accept`s and the lines before it; fails on timeout or EOF."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"timed out after {timeout}s waiting for {what}\n{self.context()}")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                pytest.fail(f"{self.name} closed stdout while waiting for {what} "
                            f"(exit code {self.proc.poll()})\n{self.context()}")
            self.transcript.append(f"<< {line}")
            self.check_line(line, what)
            if accept(line):
                return line, seen
            seen.append(line)

    def check_line(self, line: str, what: str) -> None:
        """Hook for subclasses: fail at once on a line that reports an error."""

    def sync(self) -> list[str]:
        """isready round trip; returns every line that came before readyok."""
        self.send("isready")
        return self.expect("readyok")[1]

    def bestmove(self, board: chess.Board) -> tuple[chess.Move, list[str]]:
        line, before = self.expect("bestmove")
        parts = line.split()
        assert len(parts) in (2, 4), f"malformed {line!r}\n{self.context()}"
        move = chess.Move.from_uci(parts[1])
        assert move in board.legal_moves, f"illegal {line!r} in {board.fen()}\n{self.context()}"
        return move, before

    def wait_exit(self, timeout: float = READ_GUARD) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"engine did not exit within {timeout}s\n{self.context()}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError, ValueError):
                if stream:
                    stream.close()
        self._stderr.close()


def send_bytes(engine: "RawEngine", data: bytes) -> None:
    """Write raw bytes (possibly invalid UTF-8) to the engine's stdin."""
    stdin = engine.proc.stdin
    assert stdin is not None
    engine.transcript.append(f">> {data!r}")
    stdin.flush()
    stdin.buffer.write(data)
    stdin.buffer.flush()


@contextlib.contextmanager
def guarded_engine(cmd: list[str], cwd: Path, env: dict[str, str], guard: float = TEST_GUARD):
    """A `SimpleEngine` that is killed if it is still alive after `guard` seconds."""
    engine = chess.engine.SimpleEngine.popen_uci(cmd, cwd=cwd, env=env, timeout=30)
    pid = engine.transport.get_pid()
    fired = threading.Event()

    def kill() -> None:
        fired.set()
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    timer = threading.Timer(guard, kill)
    timer.daemon = True
    timer.start()
    try:
        yield engine
    except chess.engine.EngineTerminatedError:
        if fired.is_set():
            pytest.fail(f"engine was still busy after the {guard}s hang guard and was killed")
        raise
    finally:
        timer.cancel()
        try:
            engine.quit()
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError):
            engine.close()
    assert not fired.is_set(), f"engine was still busy after the {guard}s hang guard and was killed"
