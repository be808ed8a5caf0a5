"""The net's accumulator arithmetic for a search: what a move changes, and the score read off it.

The accumulator of a position is one numpy vector of integers (float32, or
float64 for a head without a second layer: `Net.acc_dtype`),
[White's H | Black's H] (`eval.nnue`'s docstring has the features).  A move changes two to four
features, so the search updates the vector move by move instead of summing it
afresh: `Accumulator.moved` and `Accumulator.castled` return the vector after
a move, and `Accumulator.score` the side to move's centipawns.

The vectors themselves belong to the caller (`search.position.Position` keeps
one per ply, for taking moves back): an update returns a new vector and never
changes the one it was given, so the previous ply's vector stays valid.

Hot path: `moved` runs at every node the search makes a move, `score` at
every evaluation.  The tables they read (one dual row per piece and square,
the head or the second layer's exact tables) are fetched from the net once,
here, and kept as attributes; `tests/test_nnue.py` checks the result against
`Net.evaluate`, the from-scratch reference.
"""
from __future__ import annotations

import chess
import numpy as np

from eval.nnue import Net, clip_into

#: A dual row's index: 64 * (6 * (colour is Black) + type - 1) + square.
_BLACK_ROWS = 384


class Accumulator:
    """A net's incremental update and scoring, for one search."""

    __slots__ = ("net", "_rows", "_deltas", "_bucket_of", "_clip", "_inputs", "_deep", "_head", "_b2", "_divisor",
                 "_cp_scale", "_top")

    def __init__(self, net: Net) -> None:
        self.net = net
        self._rows = net.dual_rows
        self._deltas = net.move_deltas
        self._bucket_of = net.bucket_of
        self._top = float(net.qa)  # Python float bounds: the clip then keeps the accumulator's type
        self._cp_scale = net.cp_scale
        self._divisor = net.qa * net.qb
        self._head, self._b2 = net.head, net.b2
        self._deep = net.deep_score if net.deep is not None else None
        if net.deep is not None:  # the second layer reads [clipped | 1], of the accumulator's type: clip straight into it
            self._inputs = net.deep_inputs()
            self._clip = self._inputs[:-1]
        else:
            self._inputs = None
            self._clip = np.empty(2 * net.hidden)  # float64, as the accumulator and the head then

    def refresh(self, board: chess.Board) -> np.ndarray:
        """The vector of `board`, summed from scratch."""
        return self.net.accumulator(board)

    def moved(self, acc: np.ndarray, white: bool, piece: int, frm: int, placed: int, to: int,
              captured: int | None, capture_square: int) -> np.ndarray:
        """The vector after `white`'s (or Black's) `piece` went from `frm` to `to`, arriving as `placed`.

        `placed` differs from `piece` for a promotion; `captured` is the
        taken piece's type (None: no capture), on `capture_square` (not `to`
        for en passant).
        """
        own = 0 if white else _BLACK_ROWS
        if placed == piece:  # one row for the step (`Net.move_deltas`; `_step` inlined: a call a push costs)
            index = (own + 64 * piece - 64 + frm) << 6 | to
            delta = self._deltas[index]
            acc = acc + (delta if delta is not None else self._step(index))
        else:
            rows = self._rows
            acc = acc + rows[own + 64 * placed - 64 + to]
            acc -= rows[own + 64 * piece - 64 + frm]
        if captured is not None:
            acc -= self._rows[_BLACK_ROWS - own + 64 * captured - 64 + capture_square]
        return acc

    def castled(self, acc: np.ndarray, white: bool, king_from: int, king_to: int, rook_from: int,
                rook_to: int) -> np.ndarray:
        """The vector after castling: king and rook both move."""
        own = 0 if white else _BLACK_ROWS
        acc = acc + self._step((own + 320 + king_from) << 6 | king_to)
        acc += self._step((own + 192 + rook_from) << 6 | rook_to)
        return acc

    def _step(self, index: int) -> np.ndarray:
        """The step row of `Net.move_deltas` at `index` (a departure's row << 6 | the arrival), made and kept if new."""
        delta = self._deltas[index]
        if delta is None:
            rows = self._rows
            departure = index >> 6
            delta = self._deltas[index] = rows[departure - (departure & 63) + (index & 63)] - rows[departure]
        return delta

    def score(self, acc: np.ndarray, turn: chess.Color, pieces: int) -> int:
        """Centipawns for the side to move; `pieces` (kings included) picks the output bucket.

        `Net.score` inlined: numpy's clip ufunc with an output buffer
        (`clip_into`) costs a fraction of `np.clip`.
        """
        clipped = self._clip
        clip_into(acc, 0.0, self._top, out=clipped)
        bucket = self._bucket_of[pieces]
        if self._deep is not None:
            return self._deep(self._inputs, turn, bucket)
        return (int(clipped @ self._head[bucket][turn]) + self._b2[bucket]) * self._cp_scale // self._divisor
