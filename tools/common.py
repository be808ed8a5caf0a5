"""What the tools share: starting engines, clocks, openings, adjudication, Elo maths.

Imported by the other tools of this package (run as `python -m tools.match
...` from the checkout's root).  Two ways to drive an
engine live here: `open_engine` (python-chess's UCI client, for playing
games: match.py, selfplay.py, clock.py) and `RawEngine` (the bare pipe, line
by line with arrival times, for measuring the protocol itself: latency.py,
memory.py).  time_odds.py drives nothing: it forwards lines.
"""
from __future__ import annotations

import math
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Mapping, Sequence

import chess
import chess.engine

#: The repository's data folder, found from this file so that the tools' defaults
#: work from any working directory.
DATA = Path(__file__).resolve().parent.parent / "data"

#: The match openings (data/README.md says where they come from).
DEFAULT_OPENINGS = DATA / "openings.epd"

#: Centipawns a mate counts as when a score becomes a number for adjudication
#: (python-chess's `Score.score(mate_score=...)`): beyond any resign threshold.
MATE_SCORE = 100_000


# --- engines ---------------------------------------------------------------------

def open_engine(command: list[str], options: Mapping[str, object] | None = None, *, book: bool = True,
                timeout: float | None = 10.0, protocol: str = "uci") -> chess.engine.SimpleEngine:
    """A started engine with `options` set; `protocol` "uci" or "xboard".

    `book=False` also switches its own opening book off where it has one (an
    `OwnBook` option; Stockfish has none), so that games start from the given
    position.  The engine is closed again if an option is refused.  It runs
    in its own process group, so that a terminal's Ctrl-C reaches the runner
    alone, which then finishes the games in play with the engines alive (an
    engine still ends when the runner does: its input closes).
    """
    if protocol not in ("uci", "xboard"):
        raise ValueError(f"unknown engine protocol {protocol!r} (uci or xboard)")
    popen = chess.engine.SimpleEngine.popen_uci if protocol == "uci" else chess.engine.SimpleEngine.popen_xboard
    engine = popen(command, timeout=timeout, setpgrp=True)
    try:
        if not book and "OwnBook" in engine.options:
            engine.configure({"OwnBook": False})
        if options:
            engine.configure(dict(options))
    except BaseException:
        engine.close()
        raise
    return engine


class RawEngine:
    """An engine process spoken to line by line, every line it writes stamped with its arrival time."""

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lines: queue.Queue[tuple[float, str | None]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put((time.perf_counter(), line.strip()))
        self.lines.put((time.perf_counter(), None))

    def send(self, line: str) -> float:
        """Write one line; the time it was sent."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return time.perf_counter()

    def wait_for(self, prefix: str, timeout: float = 30.0) -> float:
        """The arrival time of the next line starting with `prefix` (the lines before it are dropped)."""
        deadline = time.monotonic() + timeout
        while True:
            stamp, line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if line is None:
                raise RuntimeError("engine exited")
            if line.startswith(prefix):
                return stamp

    @classmethod
    def start(cls, command: list[str], options: dict[str, str] | None = None) -> "RawEngine":
        """An engine past `uci` and `isready`, its own book switched off (sent blind: one without
        an `OwnBook` option ignores the line), then `options` set."""
        engine = cls(command)
        engine.send("uci")
        engine.wait_for("uciok")
        engine.send("setoption name OwnBook value false")
        for name, value in (options or {}).items():
            engine.send(f"setoption name {name} value {value}")
        engine.send("isready")
        engine.wait_for("readyok")
        return engine


# --- clocks -----------------------------------------------------------------------

def parse_tc(tc: str) -> tuple[float, float, int | None]:
    """BASE+INC or MOVES/BASE+INC -> (base, inc, moves per period or None)."""
    moves = None
    if "/" in tc:
        count, _, tc = tc.partition("/")
        moves = int(count)
    base, _, inc = tc.partition("+")
    return float(base), float(inc or 0), moves


class Clock:
    """Both sides' clocks under BASE+INC, or MOVES/BASE[+INC] (BASE added again every MOVES moves)."""

    def __init__(self, tc: str) -> None:
        self.base, self.inc, self.period = parse_tc(tc)
        self.left = {chess.WHITE: self.base, chess.BLACK: self.base}
        self.moves = {chess.WHITE: 0, chess.BLACK: 0}
        # python-chess tells an xboard engine the control (`level`) whenever
        # this differs from the last move's, and otherwise only the clocks:
        # one token a game, so that `level` comes once, at its start.
        self.control = object()

    def limit(self, turn: chess.Color) -> chess.engine.Limit:
        """What `go` is told when `turn` is to move (`movestogo` under a MOVES/ control)."""
        to_go = self.period - self.moves[turn] % self.period if self.period else None
        return chess.engine.Limit(white_clock=self.left[chess.WHITE], black_clock=self.left[chess.BLACK],
                                  white_inc=self.inc, black_inc=self.inc, remaining_moves=to_go,
                                  clock_id=self.control)

    def punch(self, turn: chess.Color, seconds: float, margin: float = 0.0) -> bool:
        """Charge `turn` a move that took `seconds`; False when that overran its clock by more than `margin`.

        Otherwise the increment is added, and a new period's time when one starts.
        """
        self.left[turn] -= seconds
        if self.left[turn] < -margin:
            return False
        self.left[turn] += self.inc
        self.moves[turn] += 1
        if self.period and self.moves[turn] % self.period == 0:
            self.left[turn] += self.base
        return True


# --- openings, adjudication -------------------------------------------------------

def load_openings(path: str | Path | None) -> list[chess.Board]:
    """The start positions of an EPD file (blank and `#` lines skipped); the initial position without one."""
    if not path:
        return [chess.Board()]
    boards = []
    with open(path) as epd:
        for line in epd:
            line = line.strip()
            if line and not line.startswith("#"):
                boards.append(chess.Board.from_epd(line)[0])
    return boards


def adjudicate(white_scores: Sequence[int | None], ply: int, *, resign_score: int, resign_plies: int,
               draw_score: int | None, draw_plies: int, draw_after: int) -> str | None:
    """A result ("1-0", "0-1", "1/2-1/2") once the engines' scores agree the game is decided, else None.

    `white_scores` holds the mover's score of every ply, turned to White's
    view (None where an engine gave none, which breaks a streak).  Resign:
    the last `resign_plies` scores all at least `resign_score` one way (0
    switches it off).  Draw: from ply `draw_after` on, the last `draw_plies`
    scores all within `draw_score` of 0 (None switches it off).  (training/
    datagen.py keeps its own copy of this rule for its self-play chunks.)
    """
    if resign_score and len(white_scores) >= resign_plies:
        recent = white_scores[-resign_plies:]
        if all(score is not None and score >= resign_score for score in recent):
            return "1-0"
        if all(score is not None and score <= -resign_score for score in recent):
            return "0-1"
    if draw_score is not None and ply >= draw_after and len(white_scores) >= draw_plies:
        if all(score is not None and abs(score) <= draw_score for score in white_scores[-draw_plies:]):
            return "1/2-1/2"
    return None


# --- Elo ---------------------------------------------------------------------------

def elo(score: float) -> float:
    """Logistic Elo difference of an expected score (0..1, clamped away from the ends)."""
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def expected_score(difference: float) -> float:
    """The logistic expected score of a player `difference` Elo above the other (`elo`'s inverse)."""
    return 1 / (1 + 10 ** (-difference / 400))


def wilson(score: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's interval of a mean game score over `games` games (95% by default).

    What a match reports when the pair variance is zero (every game won, lost
    or drawn): the normal interval then has no width, Wilson's still does.
    """
    if games <= 0:
        return 0.0, 1.0
    centre = score + z * z / (2 * games)
    spread = z * math.sqrt(score * (1 - score) / games + z * z / (4 * games * games))
    scale = 1 + z * z / games
    return max(0.0, (centre - spread) / scale), min(1.0, (centre + spread) / scale)


def elo_text(score: float, low: float, high: float) -> str:
    """Elo of a score with its interval's ends (scores), e.g. "+65.9 [-37.5, +182.8] (95%)".

    A one-sided result (every game won, or every game lost) has no finite
    Elo: it is given as the bound the interval allows, "> +127.3 (95%)".
    """
    if score >= 1.0:
        return f"> {elo(low):+.1f} (95% lower bound: every game won)"
    if score <= 0.0:
        return f"< {elo(high):+.1f} (95% upper bound: every game lost)"
    return f"{elo(score):+.1f} [{elo(low):+.1f}, {elo(high):+.1f}] (95%)"


def _pair_moments(penta: Sequence[int]) -> tuple[int, float, float]:
    """(pairs, mean pair score, sum of squared deviations) of game-pair counts; pair scores 0, 1/4, ..., 1."""
    pairs = sum(penta)
    values = [i / 4 for i in range(5)]
    mean = sum(count * value for count, value in zip(penta, values)) / pairs
    return pairs, mean, sum(count * (value - mean) ** 2 for count, value in zip(penta, values))


def pentanomial(penta: Sequence[int]) -> tuple[int, float, float]:
    """(pairs, mean pair score, its standard error) of game-pair counts [LL, LD, DD/WL, WD, WW].

    Pair scores are 0, 1/4, ..., 1 (a fraction of the pair's 2 points); the
    error is the pair variance's (n - 1 denominator) over the pairs.
    """
    pairs, mean, squares = _pair_moments(penta)
    return pairs, mean, math.sqrt(squares / (pairs - 1) / pairs)


def sprt_llr(penta: Sequence[int], elo0: float, elo1: float) -> float:
    """Log-likelihood ratio of H1 (`elo1`) against H0 (`elo0`) from game-pair counts.

    The generalized SPRT on pentanomial pair scores in logistic Elo, the
    formula of match.py's `--sprt` (and of the team's earlier shared runner,
    bit for bit), so that runs can be pooled and tested as one:
    LLR = n (s1 - s0) (2 m - s0 - s1) / (2 v), with m and v the mean and
    (population) variance of the pair scores and s0, s1 the expected scores
    at the two Elo values.
    """
    if sum(penta) < 2:
        return 0.0
    pairs, mean, squares = _pair_moments(penta)
    variance = squares / pairs
    if variance <= 0:
        return 0.0
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return pairs * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """(lower, upper) LLR bounds of Wald's test: accept H0 below, H1 above."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
