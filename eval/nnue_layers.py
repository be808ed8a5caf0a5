"""The layers after the accumulators: a second hidden layer (float32) and its exact-integer tables.

`DeepHead` is what a net file holds: an L-unit layer on the clipped
accumulators, then one output per material bucket.  With layer stacks
(``stacks = B``, net file version 4) each output bucket has a second layer of
its own, as Stockfish's nets have ("layer stacks"): the bucket already picks the
output row, and picking the layer as well lets the middlegame and the
endgame read the same accumulators differently, at no cost per node (one
index).  ``stacks = 1`` is the one layer every bucket shares (version 3).

`DeepTables` is what the engine runs: the weights times ``DEEP_SCALE``,
rounded, held in float64, so that every sum is an exact integer below
2**53 and the order of the additions cannot change a score (the
colour-mirrored twin gets exactly the same one, a batch the same as one
position) while numpy still multiplies in one BLAS call.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_LAYER2 = 256
#: The second layer's weights are multiplied by this and rounded (`DeepTables`).
DEEP_SCALE = 2 ** 16
#: Integers up to this are exact in float64, and so is every sum of them below it.
EXACT_LIMIT = 2 ** 53


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
    """A second layer as integer-valued float64, ready for exact arithmetic (see the module docstring).

    The input vector is [White's clipped H | Black's clipped H | 1]: the
    trailing 1 carries the bias, so one product does the layer.
    """

    inputs: list[tuple[np.ndarray, np.ndarray]]  # [bucket][turn]: (2H + 1, L), that side's weights on its own half, bias last
    top: float  # the clip's upper end: QA * DEEP_SCALE, for 1.0
    out: list[np.ndarray]  # [bucket]: (L,)
    out_bias: list[int]  # [bucket]
    divisor: int  # QA * DEEP_SCALE ** 2: the output's unit

    @classmethod
    def of(cls, deep: DeepHead, hidden: int, qa: int) -> DeepTables:
        stacks = []
        for weight, bias in zip(deep.weight, deep.bias):
            weight = np.round(weight.astype(np.float64) * DEEP_SCALE)  # side to move's rows first
            bias = np.round(bias.astype(np.float64) * (qa * DEEP_SCALE))
            white = np.vstack([weight, bias])
            black = np.vstack([weight[hidden:], weight[:hidden], bias])
            stacks.append((black, white))
        buckets = len(deep.out_bias)
        inputs = [stacks[deep.stack_of(bucket)] for bucket in range(buckets)]  # shared tables when S = 1
        out = [np.round(row.astype(np.float64) * DEEP_SCALE) for row in deep.out_weight]
        out_bias = [round(float(b) * qa * DEEP_SCALE * DEEP_SCALE) for b in deep.out_bias]
        return cls(inputs, float(qa * DEEP_SCALE), out, out_bias, qa * DEEP_SCALE * DEEP_SCALE)

    @property
    def exact(self) -> bool:
        """Whether no sum can reach EXACT_LIMIT (a sane net is far below it; a hostile file may not be)."""
        qa = self.top / DEEP_SCALE  # an input's largest value
        layer = max(float((qa * np.abs(white[:-1]).sum(axis=0) + np.abs(white[-1])).max()) for _, white in self.inputs)
        output = max(self.top * float(np.abs(row).sum()) + abs(b) for row, b in zip(self.out, self.out_bias))
        return layer < EXACT_LIMIT and output < EXACT_LIMIT
