"""What the game-playing tools share: opening files, adjudication, Elo maths.

Imported by `match.py`, `selfplay.py`, `clock.py` and `elo.py`, which are run
as scripts (`python tools/match.py ...`), so this folder is on `sys.path`.
"""
from __future__ import annotations

import math
from typing import Sequence

import chess

#: Centipawns a mate counts as when a score becomes a number for adjudication
#: (python-chess's `Score.score(mate_score=...)`): beyond any resign threshold.
MATE_SCORE = 100_000


def load_openings(path: str | None) -> list[chess.Board]:
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
    scores all within `draw_score` of 0 (None switches it off).
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


def elo(score: float) -> float:
    """Logistic Elo difference of an expected score (0..1, clamped away from the ends)."""
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def pentanomial(penta: Sequence[int]) -> tuple[int, float, float]:
    """(pairs, mean pair score, its standard error) of game-pair counts [LL, LD, DD/WL, WD, WW].

    Pair scores are 0, 1/4, ..., 1 (a fraction of the pair's 2 points); the
    error is the pair variance's (n - 1 denominator) over the pairs.
    """
    pairs = sum(penta)
    values = [i / 4 for i in range(5)]
    mean = sum(count * value for count, value in zip(penta, values)) / pairs
    variance = sum(count * (value - mean) ** 2 for count, value in zip(penta, values)) / (pairs - 1)
    return pairs, mean, math.sqrt(variance / pairs)
