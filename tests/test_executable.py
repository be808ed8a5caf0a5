"""Build the single-file PyInstaller executable and drive it over UCI.

Slow (a PyInstaller build takes a while): deselect with ``-m 'not slow'``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import chess
import chess.polyglot
import pytest

from tests.uci_process import RawEngine

REPO_ROOT = Path(__file__).resolve().parent.parent
SPEC = REPO_ROOT / "build.spec"
BOOK = REPO_ROOT / "opening_book" / "data" / "default.bin"
EXE_NAME = "pawnstorm.exe" if os.name == "nt" else "pawnstorm"

BUILD_TIMEOUT = 600

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


def test_executable_speaks_uci(executable: Path, tmp_path: Path) -> None:
    engine = RawEngine([str(executable)], tmp_path, dict(os.environ), tmp_path / "stderr.txt")
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
        engine.bestmove(board)[0]

        # The bundled opening book must be found inside the one-file executable.
        engine.send("setoption name OwnBook value true")
        engine.send("isready")
        engine.expect("readyok")
        engine.send("position startpos")
        engine.send("go movetime 100")
        board = chess.Board()
        move, before = engine.bestmove(board)
        assert BOOK.is_file(), f"{BOOK} is missing from the checkout"
        with chess.polyglot.open_reader(BOOK) as reader:
            book_moves = {entry.move for entry in reader.find_all(board, minimum_weight=0)}
        assert book_moves, f"{BOOK} has no move for the start position"
        assert f"info string book move {move.uci()}" in before and move in book_moves, (
            f"with OwnBook=true the engine played {move.uci()}, not one of the book's moves "
            f"{sorted(m.uci() for m in book_moves)}: is default.bin bundled?\n{engine.context()}"
        )

        # The bundled net (and numpy) must be inside the executable too.
        engine.send("setoption name Use NNUE value true")
        engine.send("eval")
        line, _ = engine.expect("NNUE evaluation:")
        assert "in use" in line and "not in use" not in line, f"the bundled net did not load:\n{engine.context()}"
        engine.send("position startpos moves e2e4")
        engine.send("go depth 3")
        board = chess.Board()
        board.push_uci("e2e4")
        engine.bestmove(board)

        engine.send("quit")
        code = engine.wait_exit()
        assert code == 0, f"engine exited with {code} after 'quit'\n{engine.context()}"
    finally:
        engine.close()


def test_executable_searches_with_helper_processes(executable: Path, tmp_path: Path) -> None:
    """Threads 2 under the frozen executable: helpers start (multiprocessing's own bootstrap), search and end."""
    engine = RawEngine([str(executable)], tmp_path, dict(os.environ), tmp_path / "stderr.txt")
    try:
        engine.send("uci")
        engine.expect("uciok")
        engine.send("setoption name Threads value 2")
        engine.send("isready")
        engine.expect("readyok", timeout=120)
        engine.send("position startpos moves d2d4")
        engine.send("go depth 5")
        board = chess.Board()
        board.push_uci("d2d4")
        _, before = engine.bestmove(board)
        assert not any(line.startswith("info string search helper") for line in before), engine.context()
        engine.send("go depth 4")  # the helpers are still there for the next search
        _, before = engine.bestmove(board)
        assert not any(line.startswith("info string search helper") for line in before), engine.context()
        engine.send("quit")
        assert engine.wait_exit() == 0, engine.context()
        assert "Traceback" not in engine.stderr(), engine.stderr()
    finally:
        engine.close()


def test_executable_draws_the_epd_progress_bar(executable: Path, tmp_path: Path) -> None:
    """tqdm, imported only when `epd` or `annotate` draws a bar, is inside the executable."""
    suite = tmp_path / "suite.epd"
    suite.write_text('rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - am f3; id "start";\n')
    proc = subprocess.run([str(executable), "epd", str(suite), "--depth", "2", "--progress"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "solved 1/1" in proc.stdout
    assert "epd: 100%" in proc.stderr and "1/1" in proc.stderr, proc.stderr
