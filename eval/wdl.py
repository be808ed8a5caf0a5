"""Win/draw/loss probabilities from a centipawn score (`UCI_ShowWDL`).

The model is Stockfish's shape: the chance that the side to move wins is a
logistic curve in the score, whose centre `a` and width `b` depend on how
much material is left (the same +150 cp decides more games with few pieces
than with many).

    win(s)  = 1 / (1 + exp((a - s) / b))
    loss(s) = win(-s)
    draw    = 1 - win - loss

with a = a0 + a1 * m and b = b0 + b1 * m, m the material count (P=1, N=B=3,
R=5, Q=9; both sides, clamped to 17..78 like Stockfish).  The constants are
fitted by maximum likelihood on self-play games by `training/wdl_fit.py`; the
provenance of the numbers below is in docs/wdl.md.
"""
from __future__ import annotations

import math

import chess

# Fitted by training/wdl_fit.py on data/selfplay-2000.pgn.gz (docs/wdl.md).
A0, A1 = 148.2, -1.089
B0, B1 = 89.7, 1.652

MATERIAL_MIN, MATERIAL_MAX = 17, 78
#: The model's material count, Stockfish's (the fitted A1, B1 are per unit of it).
_MATERIAL_VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}


def material(board: chess.Board) -> int:
    """Material count of both sides (P=1, N=B=3, R=5, Q=9), clamped to the fitted range."""
    count = sum(value * chess.popcount(board.pieces_mask(piece, chess.WHITE) | board.pieces_mask(piece, chess.BLACK))
                for piece, value in _MATERIAL_VALUE.items())
    return min(max(count, MATERIAL_MIN), MATERIAL_MAX)


def win_probability(score: float, count: int, params: tuple[float, float, float, float] | None = None) -> float:
    """Chance that the side with `score` (cp, its own view) wins."""
    a0, a1, b0, b1 = params if params is not None else (A0, A1, B0, B1)
    a = a0 + a1 * count
    b = max(b0 + b1 * count, 1.0)
    x = (a - score) / b
    if x > 700:
        return 0.0
    return 1.0 / (1.0 + math.exp(x))


def wdl(score: int, count: int, mate_in: int | None = None) -> tuple[int, int, int]:
    """(win, draw, loss) in per mille for the side to move; they sum to 1000."""
    if mate_in is not None:
        return (1000, 0, 0) if mate_in > 0 else (0, 0, 1000)
    win = round(1000 * win_probability(score, count))
    loss = round(1000 * win_probability(-score, count))
    return win, 1000 - win - loss, loss
