"""A minimal UCI client for labelling positions with Stockfish.

python-chess's `chess.engine` would do, but its asyncio round trip costs more
than a depth-8 Stockfish search of a quiet position; a blocking pipe is about
as fast as Stockfish itself.  Every game starts from a cleared hash and
cleared histories (`new_game`), so a label depends only on the positions
labelled before it in its game and the limit, never on what an earlier game
or chunk left behind: runs are reproducible whatever the worker count or the
order of resumption.  Clearing once a game rather than once a position (as
before session 36) makes a label about a third cheaper, since Stockfish's
`ucinewgame` zeroes megabytes of history tables, and lets a position's search
reuse what the previous position's search found, as in a real game.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass

import chess

from training.records import MATE_SCORE


class TeacherError(RuntimeError):
    """The engine died or spoke something unexpected."""


@dataclass(frozen=True)
class Label:
    score: int  # cp, side to move's view; mates as +-MATE_SCORE
    best_move: chess.Move | None


class Teacher:
    """One Stockfish process searching each position to a fixed depth."""

    def __init__(self, command: str = "/usr/games/stockfish", depth: int = 8, hash_mb: int = 1) -> None:
        self.depth = depth
        self.process = subprocess.Popen([command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self._send("uci")
        self.name = ""
        for line in self._lines_until("uciok"):
            if line.startswith("id name "):
                self.name = line[8:].strip()
        self._send("setoption name Threads value 1")
        self._send(f"setoption name Hash value {hash_mb}")
        self._send("isready")
        for _ in self._lines_until("readyok"):
            pass

    def _send(self, command: str) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        except BrokenPipeError as error:
            raise TeacherError(f"teacher died ({error})") from None

    def _lines_until(self, prefix: str):
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise TeacherError("teacher closed its output")
            yield line
            if line.startswith(prefix):
                return

    def new_game(self) -> None:
        """Forget everything searched so far: call it before each game's first label."""
        self._send("ucinewgame")

    def label(self, board: chess.Board) -> Label:
        """The teacher's score and best move for `board` (which must have a legal move).

        It depends on what was labelled since the last `new_game`: label a
        game's positions in order, after a `new_game`.
        """
        self._send(f"position fen {board.fen()}")
        self._send(f"go depth {self.depth}")
        score: int | None = None
        best: chess.Move | None = None
        for line in self._lines_until("bestmove"):
            if line.startswith("info") and " score " in line:
                words = line.split()
                at = words.index("score")
                if words[at + 1] == "cp":
                    score = int(words[at + 2])
                elif words[at + 1] == "mate":
                    score = MATE_SCORE if int(words[at + 2]) > 0 else -MATE_SCORE
            elif line.startswith("bestmove"):
                word = line.split()[1]
                best = None if word == "(none)" else chess.Move.from_uci(word)
        if score is None:
            raise TeacherError(f"no score for {board.fen()}")
        return Label(score, best)

    def close(self) -> None:
        try:
            self._send("quit")
            self.process.wait(timeout=5)
        except (TeacherError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
