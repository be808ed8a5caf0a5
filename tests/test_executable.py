"""Build the single-file PyInstaller executable and drive it over UCI.

Slow (a PyInstaller build takes a while): deselect with ``-m 'not slow'``.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import chess
import chess.polyglot
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SPEC = REPO_ROOT / "build.spec"
BOOK = REPO_ROOT / "opening_book" / "data" / "default.bin"
EXE_NAME = "pawnstorm.exe" if os.name == "nt" else "pawnstorm"

BUILD_TIMEOUT = 600
UCI_TIMEOUT = 30

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("PyInstaller") is None,
        reason="PyInstaller is not installed (pip install -e '.[build]' or '.[test]')",
    ),
]


@pytest.fixture(scope="module")
def executable(tmp_path_factory) -> Path:
    """Build dist/pawnstorm once for this module, in a temporary directory."""
    out = tmp_path_factory.mktemp("pyinstaller")
    cmd = [
        sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean",
        "--distpath", str(out / "dist"), "--workpath", str(out / "build"),
        str(SPEC),
    ]
    log = out / "build.log"
    start = time.monotonic()
    with open(log, "w") as fh:
        try:
            proc = subprocess.run(cmd, cwd=REPO_ROOT, stdout=fh, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"PyInstaller build exceeded {BUILD_TIMEOUT}s; log: {log}")
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
    assert proc.returncode == 0, f"PyInstaller failed (exit {proc.returncode}):\n{tail}"
    exe = out / "dist" / EXE_NAME
    assert exe.is_file(), f"PyInstaller produced no {exe}:\n{tail}"
    print(f"PyInstaller build took {time.monotonic() - start:.1f}s")
    return exe


class UciProcess:
    """Minimal UCI driver: a reader thread feeds stdout lines into a queue,
    so every wait has a timeout and a hung engine fails instead of hanging."""

    def __init__(self, cmd: list[str], cwd: Path, stderr_path: Path):
        self._stderr = open(stderr_path, "w+")
        self.proc = subprocess.Popen(
            cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, text=True, bufsize=1,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.transcript: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\r\n"))
        self.lines.put(None)  # EOF

    def send(self, command: str) -> None:
        self.transcript.append(f">> {command}")
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def context(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        err = self._stderr.read()[-3000:]
        return "\n".join(self.transcript[-60:]) + (f"\n--- stderr ---\n{err}" if err else "")

    def expect(self, prefix: str, timeout: float = UCI_TIMEOUT) -> tuple[str, list[str]]:
        """Wait for a line starting with ``prefix``; return it and the lines before it."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"timed out after {timeout}s waiting for {prefix!r}\n{self.context()}")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                pytest.fail(f"engine closed stdout while waiting for {prefix!r} "
                            f"(exit code {self.proc.poll()})\n{self.context()}")
            self.transcript.append(f"<< {line}")
            if line == prefix or line.startswith(prefix + " "):
                return line, seen
            seen.append(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
        self._stderr.close()


def _bestmove(engine: UciProcess, board: chess.Board) -> chess.Move:
    line, _ = engine.expect("bestmove")
    parts = line.split()
    assert len(parts) >= 2, f"malformed bestmove line {line!r}"
    move = chess.Move.from_uci(parts[1])
    assert move in board.legal_moves, f"illegal bestmove {parts[1]} in {board.fen()}\n{engine.context()}"
    return move


def test_executable_speaks_uci(executable: Path, tmp_path: Path) -> None:
    engine = UciProcess([str(executable)], cwd=tmp_path, stderr_path=tmp_path / "stderr.txt")
    try:
        engine.send("uci")
        _, header = engine.expect("uciok")
        assert any(line.startswith("id name ") for line in header), f"no 'id name' line:\n{engine.context()}"
        assert any(line.startswith("option name OwnBook") for line in header), \
            f"engine does not advertise the OwnBook option:\n{engine.context()}"

        engine.send("isready")
        engine.expect("readyok")

        # A normal search.
        engine.send("position startpos moves e2e4 e7e5")
        engine.send("go movetime 200")
        board = chess.Board()
        board.push_uci("e2e4")
        board.push_uci("e7e5")
        _bestmove(engine, board)

        # The bundled opening book must be found inside the one-file executable.
        engine.send("setoption name OwnBook value true")
        engine.send("isready")
        engine.expect("readyok")
        engine.send("position startpos")
        engine.send("go movetime 100")
        board = chess.Board()
        move = _bestmove(engine, board)
        if BOOK.is_file():
            with chess.polyglot.open_reader(BOOK) as reader:
                book_moves = {entry.move for entry in reader.find_all(board, minimum_weight=0)}
            if book_moves:
                assert move in book_moves, (
                    f"with OwnBook=true the engine played {move.uci()}, not one of the book's moves "
                    f"{sorted(m.uci() for m in book_moves)}: is default.bin bundled?\n{engine.context()}"
                )

        engine.send("quit")
        try:
            code = engine.proc.wait(timeout=UCI_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"engine did not exit within {UCI_TIMEOUT}s of 'quit'\n{engine.context()}")
        assert code == 0, f"engine exited with {code} after 'quit'\n{engine.context()}"
    finally:
        engine.close()
