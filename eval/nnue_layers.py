"""The layers after the accumulators: a second hidden layer (float32) and its exact-integer tables.

`DeepHead` is what a net file holds: an L-unit layer on the clipped
accumulators, then one output per material bucket.  With layer stacks
(``stacks = B``, net file version 4) each output bucket has a second layer of
its own, as Stockfish's nets have ("layer stacks"): the bucket already picks the
output row, and picking the layer as well lets the middlegame and the
endgame read the same accumulators differently, at no cost per node (one
index).  ``stacks = 1`` is the one layer every bucket shares (version 3).

`DeepTables` is what the engine runs: the weights times a power of two,
rounded, so that every sum is an exact integer and the order of the
additions cannot change a score (the colour-mirrored twin gets exactly the
same one, a batch the same as one position) while numpy still multiplies in
one BLAS call.  The second layer's product (2H + 1 inputs by L units) is
most of an evaluation's cost, and float32 does it in about half the time of
float64 (twice the numbers a vector instruction), but float32 holds
integers exactly only up to 2**24.  So the layer's weights are scaled by
the largest power of two from 2**16 down to 2**9 that keeps its every
partial sum within that, and held in float32; a net whose weights are too
large even at 2**9 runs in float64 at 2**16 (exact to 2**53).  The output
layer (L numbers) is float64 at 2**16 either way.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_LAYER2 = 256
#: The output layer's weights are multiplied by this and rounded (`DeepTables`),
#: and so is the second layer's in float64.
DEEP_SCALE = 2 ** 16
#: The least scale at which the second layer runs in float32.  The bundled
#: net runs there: its scores are then 1.2 centipawns from the float net's on
#: average, at most 6 (2,406 positions of random games; docs/speed.md).
FLOAT32_LEAST_SCALE = 2 ** 9
#: Integers up to this are exact in float64, and so is every sum of them below it.
EXACT_LIMIT = 2 ** 53
#: The same for float32.
FLOAT32_EXACT_LIMIT = 2 ** 24


@dataclass(frozen=True)
class DeepHead:
    """A second hidden layer (one, or one per output bucket) and its B outputs, float32.

    A (2H, L) weight and (L,) bias are taken as a single stack.
    """

    weight: np.ndarray  # (S, 2H, L): each stack's side-to-move H rows first
    bias: np.ndarray  # (S, L)
    out_weight: np.ndarray  # (B, L)
    out_bias: np.ndarray  # (B,)

    def __post_init__(self) -> None:
        for name in ("weight", "bias", "out_weight", "out_bias"):
            object.__setattr__(self, name, np.ascontiguousarray(getattr(self, name), dtype=np.float32))
        if self.weight.ndim == 2:
            object.__setattr__(self, "weight", self.weight[None])
        if self.bias.ndim == 1:
            object.__setattr__(self, "bias", self.bias[None])

    @property
    def size(self) -> int:
        """L, the second layer's units."""
        return self.bias.shape[1]

    @property
    def stacks(self) -> int:
        """S: 1 (every bucket shares the layer) or B (a layer per output bucket)."""
        return self.weight.shape[0]

    def stack_of(self, bucket: int) -> int:
        return bucket if self.stacks > 1 else 0


@dataclass(frozen=True)
class DeepTables:
    """A second layer as integer-valued float32 (or float64) tables, ready for exact arithmetic (module docstring).

    The input vector is [White's clipped H | Black's clipped H | 1], of the
    tables' dtype: the trailing 1 carries the bias, so one product
    ``inputs[bucket][turn].dot(vector)`` does the layer.  A table is held
    (L, 2H + 1), a unit's weights in a row: float32 BLAS multiplies that
    layout faster than (2H + 1, L).
    """

    inputs: list[tuple[np.ndarray, np.ndarray]]  # [bucket][turn]: (L, 2H + 1), that side's weights on its own half, bias last
    scale: int  # the second layer's weights were multiplied by this
    top: float  # the clip's upper end: QA * scale, for 1.0
    out: list[np.ndarray]  # [bucket]: (L,) float64, weights times DEEP_SCALE
    out_bias: list[int]  # [bucket]
    divisor: int  # QA * scale * DEEP_SCALE: the output's unit

    @classmethod
    def of(cls, deep: DeepHead, hidden: int, qa: int) -> DeepTables:
        """float32 at the largest scale from 2**16 down to FLOAT32_LEAST_SCALE that is exact, else float64 at 2**16."""
        scale = DEEP_SCALE
        while scale >= FLOAT32_LEAST_SCALE:
            tables = cls.at(deep, hidden, qa, scale, np.float32)
            if tables.exact:
                return tables
            scale //= 2
        return cls.at(deep, hidden, qa, DEEP_SCALE, np.float64)

    @classmethod
    def at(cls, deep: DeepHead, hidden: int, qa: int, scale: int, dtype: type) -> DeepTables:
        """The tables with the second layer's weights times `scale`, held as `dtype`."""
        stacks = []
        for weight, bias in zip(deep.weight, deep.bias):
            weight = np.round(weight.astype(np.float64) * scale)  # side to move's rows first
            bias = np.round(bias.astype(np.float64) * (qa * scale))
            white = np.vstack([weight, bias]).T
            black = np.vstack([weight[hidden:], weight[:hidden], bias]).T
            stacks.append(tuple(np.ascontiguousarray(table, dtype=dtype) for table in (black, white)))
        buckets = len(deep.out_bias)
        inputs = [stacks[deep.stack_of(bucket)] for bucket in range(buckets)]  # shared tables when S = 1
        out = [np.round(row.astype(np.float64) * DEEP_SCALE) for row in deep.out_weight]
        out_bias = [round(float(b) * qa * scale * DEEP_SCALE) for b in deep.out_bias]
        return cls(inputs, scale, float(qa * scale), out, out_bias, qa * scale * DEEP_SCALE)

    @property
    def dtype(self) -> np.dtype:
        """float32, or float64 for a net too large for it: the input vector's type too."""
        return self.inputs[0][0].dtype

    @property
    def exact(self) -> bool:
        """Whether every partial sum stays exact: the second layer's within its dtype's limit, the output's within float64's.

        The inputs lie in [0, QA] (the output layer's in [0, top]), so
        whatever order BLAS adds in, a partial sum of a unit lies between
        minus its negative terms at their largest and its positive terms
        at their largest.  A sane net is far below float64's limit; a
        hostile file may not be.
        """
        qa = self.top / self.scale  # an input's largest value
        layer = max(_largest_partial_sum(table.astype(np.float64), qa) for _, table in self.inputs)
        output = max(_largest_partial_sum(np.append(row, b)[None], self.top) for row, b in zip(self.out, self.out_bias))
        limit = FLOAT32_EXACT_LIMIT if self.dtype == np.float32 else EXACT_LIMIT
        return layer < limit and output < EXACT_LIMIT


def _largest_partial_sum(table: np.ndarray, top: float) -> float:
    """The largest magnitude a partial sum of a row of `table` can reach: inputs in [0, top], the last one 1 (the bias)."""
    weights, bias = table[:, :-1], table[:, -1]
    positive = top * np.clip(weights, 0, None).sum(axis=1) + np.clip(bias, 0, None)
    negative = top * np.clip(-weights, 0, None).sum(axis=1) + np.clip(-bias, 0, None)
    return float(np.maximum(positive, negative).max())
