"""Play Pawnstorm through PolyGlot, the xboard (CECP) -> UCI adapter.

This is how xboard/WinBoard (and other CECP-only GUIs) run a UCI engine:
xboard starts ``polyglot pawnstorm.ini``, talks CECP to it, and PolyGlot
starts ``python -m uci_engine`` and translates.  The tests here take xboard's
place: they write a PolyGlot ini file, speak CECP on PolyGlot's stdin/stdout
(``xboard``, ``protover 2``, ``new``, ``st``/``level``, ``time``/``otim``,
``post``, ``usermove``, ``go``, ``setboard``, ``quit``), play short games with
python-chess keeping the board, and check every ``move`` the engine sends is
legal, that thinking output follows ``post``/``nopost`` and that ``quit`` ends
both PolyGlot and the engine.

Skipped when the ``polyglot`` executable (Debian package ``polyglot``, in
/usr/games) is missing; ``.ci/run`` installs it.  Every read has a timeout and
both processes are killed if a test fails.
"""

from __future__ import annotations

import os
import random
import re
import shlex
import shutil
import sys
import time
from pathlib import Path

import chess
import pytest

from tests.uci_process import RawEngine


def find_polyglot() -> str | None:
    found = shutil.which("polyglot")
    if found:
        return found
    # Debian installs games into /usr/games, which is often not on PATH.
    candidate = "/usr/games/polyglot"
    return candidate if os.access(candidate, os.X_OK) else None


POLYGLOT = find_polyglot()

pytestmark = pytest.mark.skipif(
    POLYGLOT is None,
    reason="polyglot (the xboard->UCI adapter, Debian package 'polyglot') is not installed; "
           ".ci/run installs it",
)

#: Hang guard for one read (a move under `st 1` takes about a second).
READ_GUARD = 30.0
#: Plies each side plays in the game tests.
MOVES_PER_SIDE = 8
#: xboard thinking output: ply score time(cs) nodes pv.
THINKING = re.compile(r"^\s*(\d+)\s+([+-]?\d+)\s+(\d+)\s+(\d+)\s+(\S.*)$")


def write_ini(path: Path, repo_root: Path, log_file: Path) -> Path:
    """A PolyGlot config for the engine run from the source tree."""
    path.write_text(
        "[PolyGlot]\n"
        "EngineName = Pawnstorm\n"
        f"EngineDir = {repo_root}\n"
        # PolyGlot passes EngineCommand through wordexp(3): shell quoting applies.
        f"EngineCommand = {shlex.quote(sys.executable)} -m uci_engine\n"
        "Book = false\n"
        "Log = true\n"
        f"LogFile = {log_file}\n"
        "Resign = false\n"
        "[Engine]\n"
        "Hash = 16\n"
        "OwnBook = false\n"
    )
    return path


def engine_children(pid: int) -> list[int]:
    """Pids of the processes whose parent is `pid` (Linux /proc), i.e. the UCI engine."""
    children = []
    proc = Path("/proc")
    if not proc.is_dir():
        return children
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Field 4 (ppid) follows the parenthesised command name, which may contain spaces.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            children.append(int(entry.name))
    return children


def is_alive(pid: int) -> bool:
    """Whether `pid` is a running (not zombie) process."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = next((line.split()[1] for line in status.splitlines() if line.startswith("State:")), "?")
    return state not in ("Z", "X")


class XboardSession(RawEngine):
    """PolyGlot over pipes, driven as xboard would drive it."""

    name = "polyglot"

    def __init__(self, polyglot: str, ini: Path, log_file: Path, cwd: Path, env: dict[str, str],
                 stderr_path: Path) -> None:
        super().__init__([polyglot, str(ini)], cwd, env, stderr_path)
        self.log_file = log_file
        self.engine_pids: list[int] = []

    def context(self) -> str:
        log = ""
        if self.log_file.exists():
            log = "\n".join(self.log_file.read_text(errors="replace").splitlines()[-60:])
        return super().context() + f"\n--- polyglot log (tail) ---\n{log}"

    def check_line(self, line: str, what: str) -> None:
        if line.startswith(("Error", "Illegal move", "tellusererror", "telluser")):
            pytest.fail(f"polyglot reported {line!r} while waiting for {what}\n{self.context()}")

    def handshake(self) -> list[str]:
        """`xboard` + `protover 2`; returns the feature lines up to `done=1`."""
        self.send("xboard")
        self.send("protover 2")
        # PolyGlot starts the engine and waits for its uciok before `done=1`.
        line, before = self.expect_where(lambda l: l.startswith("feature") and "done=1" in l.split(),
                                         "feature ... done=1")
        self.engine_pids = engine_children(self.proc.pid)
        return [l for l in before + [line] if l.startswith("feature")]

    def engine_move(self, board: chess.Board) -> tuple[chess.Move, list[str]]:
        """Wait for `move X`, assert X is legal in `board`; returns it and the lines before."""
        line, before = self.expect_where(lambda l: l.startswith("move "), "the engine's move")
        text = line.split()[1]
        try:
            move = chess.Move.from_uci(text)
        except ValueError:
            pytest.fail(f"malformed {line!r}\n{self.context()}")
        assert move in board.legal_moves, f"illegal {line!r} in {board.fen()}\n{self.context()}"
        return move, before

    def ping(self, n: int) -> list[str]:
        """`ping n` round trip (only when the engine is idle); the lines before `pong n`."""
        self.send(f"ping {n}")
        return self.expect_where(lambda l: l == f"pong {n}", f"pong {n}")[1]

    def close(self) -> None:
        super().close()
        for pid in self.engine_pids:  # only the engine this PolyGlot started
            if is_alive(pid):
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass


def thinking_lines(lines: list[str]) -> list[re.Match[str]]:
    return [m for m in map(THINKING.match, lines) if m]


def assert_thinking_is_sane(matches: list[re.Match[str]], board: chess.Board, context: str) -> None:
    """Each thinking line's PV starts with a legal SAN move in `board` (the engine to move)."""
    for match in matches:
        ply, score, centis, nodes = (int(match.group(i)) for i in range(1, 5))
        assert ply >= 1 and centis >= 0 and nodes >= 0, f"odd thinking line {match.group(0)!r}\n{context}"
        assert abs(score) < 200000, f"odd score in {match.group(0)!r}\n{context}"
        # PolyGlot ends a fail-high PV with "!" and a fail-low one with "?"
        # (the engine's lowerbound / upperbound; its changelog: "relayed in
        # thinking output as trailing ? and !").  A one-move PV carries the
        # mark on its first move, which must still be legal.
        first = match.group(5).split()[0].removesuffix("!").removesuffix("?")
        try:
            board.parse_san(first)
        except ValueError:
            pytest.fail(f"PV of {match.group(0)!r} does not start with a legal move "
                        f"in {board.fen()}\n{context}")


@pytest.fixture
def xboard(repo_root, engine_env, tmp_path):
    log_file = tmp_path / "polyglot.log"
    ini = write_ini(tmp_path / "pawnstorm.ini", repo_root, log_file)
    assert POLYGLOT is not None
    session = XboardSession(POLYGLOT, ini, log_file, tmp_path, engine_env, tmp_path / "stderr.txt")
    try:
        yield session
    finally:
        session.close()


def test_handshake_features(xboard):
    features = xboard.handshake()
    text = "\n".join(features)
    assert 'myname="Pawnstorm"' in text, text
    assert "usermove=1" in text and "setboard=1" in text, text
    # The engine's own UCI options are offered to xboard.
    assert 'option="OwnBook -check 0"' in text, text  # set to false by the ini
    assert 'option="Move Overhead -spin 30 0 5000"' in text, text
    assert xboard.engine_pids, "polyglot did not start the engine"
    xboard.ping(1)


@pytest.mark.slow  # a game through polyglot
def test_engine_plays_black_with_fixed_time_and_post(xboard):
    """`st 1`, `post`: the engine answers random white moves, with thinking output."""
    xboard.handshake()
    xboard.send("new")
    xboard.send("st 1")
    xboard.send("post")
    rng = random.Random(20240505)
    board = chess.Board()
    for _ in range(MOVES_PER_SIDE):
        ours = rng.choice(list(board.legal_moves))
        xboard.send(f"usermove {ours.uci()}")
        board.push(ours)
        if board.is_game_over():
            break
        move, before = xboard.engine_move(board)
        thinking = thinking_lines(before)
        assert thinking, f"no thinking output with post on before move {move}\n{xboard.context()}"
        assert_thinking_is_sane(thinking, board, xboard.context())
        board.push(move)
        if board.is_game_over():
            break
    assert board.fullmove_number >= 4, board.fen()
    quit_and_check_exit(xboard)


@pytest.mark.slow  # a game through polyglot
def test_engine_plays_white_on_a_clock_without_post(xboard):
    """`level` + `time`/`otim`, `go` as white, `nopost`: moves come, thinking does not."""
    xboard.handshake()
    xboard.send("new")
    xboard.send("level 0 0:20 0")  # 20 s sudden death
    xboard.send("nopost")
    rng = random.Random(7)
    board = chess.Board()
    # The clock xboard reports before each move stays at 20 s: what the engine does with
    # a clock is tested on a deterministic one (tests/test_clock.py); here the point is
    # that `level`/`time`/`otim` reach it as a clock and moves come back, on any machine.
    xboard.send("time 2000")
    xboard.send("otim 2000")
    xboard.send("go")
    for _ in range(MOVES_PER_SIDE):
        move, before = xboard.engine_move(board)
        assert not thinking_lines(before), f"thinking output with nopost\n{xboard.context()}"
        board.push(move)
        if board.is_game_over():
            break
        ours = rng.choice(list(board.legal_moves))
        board.push(ours)
        xboard.send("time 2000")
        xboard.send("otim 2000")
        xboard.send(f"usermove {ours.uci()}")
        if board.is_game_over():
            break
    assert board.fullmove_number >= 4, board.fen()
    gos = [line for line in xboard.log_file.read_text(errors="replace").splitlines() if "Adapter->Engine: go " in line]
    assert gos and all(line.endswith("go wtime 20000 btime 20000") for line in gos), gos
    quit_and_check_exit(xboard)


def test_setboard_mate_in_one(xboard):
    """`setboard` a back-rank mate: the engine mates and PolyGlot scores the game."""
    xboard.handshake()
    xboard.send("new")
    xboard.send("force")
    board = chess.Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
    xboard.send(f"setboard {board.fen()}")
    xboard.send("st 1")
    xboard.send("post")
    xboard.send("go")
    move, before = xboard.engine_move(board)
    assert_thinking_is_sane(thinking_lines(before), board, xboard.context())
    board.push(move)
    assert board.is_checkmate(), f"{move} does not mate\n{xboard.context()}"
    result, _ = xboard.expect_where(lambda l: l.startswith(("1-0", "0-1", "1/2-1/2")), "the result")
    assert result.startswith("1-0"), result
    quit_and_check_exit(xboard)


def quit_and_check_exit(xboard: XboardSession) -> None:
    """`quit` ends PolyGlot (exit code 0) and the engine it started."""
    assert xboard.engine_pids, "polyglot did not start the engine"
    xboard.send("quit")
    code = xboard.wait_exit(timeout=READ_GUARD)
    assert code == 0, f"polyglot exited with {code}\n{xboard.context()}"
    deadline = time.monotonic() + READ_GUARD
    while any(is_alive(pid) for pid in xboard.engine_pids):
        if time.monotonic() > deadline:
            pytest.fail(f"the engine outlived polyglot's quit\n{xboard.context()}")
        time.sleep(0.05)
