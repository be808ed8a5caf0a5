"""The float net the trainer fits, and its quantisation to the engine's integer net (`eval.nnue`).

`FloatNet` is 768 -> H x 2 [-> L] -> B in float32 with Adam;
`quantise` writes the integers the engine plays, and `quantised_cp` is the
engine's arithmetic vectorised, so that the trainer can report what the
quantisation costs.  `training.nnue` runs the training.
"""
from __future__ import annotations

import chess
import numpy as np
import scipy.sparse

from eval.nnue import INPUTS, DeepHead, Net
from training.nnue_data import K

#: A net's output unit in centipawns.
CP_SCALE = 400
#: The integer scales of the accumulators (QA) and of the output weights (QB).
QA, QB = 255, 256
#: The largest magnitude a quantised weight takes: int16's, kept symmetric.
INT16_LIMIT = 32767


# --- the float net -----------------------------------------------------------

class FloatNet:
    """768 -> H x 2 [-> L] -> 1 (one of B output heads) in float32, with Adam.

    Every method that runs the head takes `bucket`, each position's output
    bucket (`output_buckets`); None (or one bucket) is bucket 0 throughout.
    Without a second layer the output weights are "w2", "b2"; with one
    (`layer2` = L units) they are "l2w" (S x 2H x L), "l2b" (S x L) and then
    "w3", "b3", where S is 1, or B with `stacks` (a second layer per output
    bucket, `eval.nnue_layers`).
    """

    def __init__(self, hidden: int, rng: np.random.Generator, buckets: int = 1, layer2: int = 0,
                 stacks: bool = False) -> None:
        # Every bucket starts alike.
        w1 = (rng.standard_normal((INPUTS, hidden)) * 0.05).astype(np.float32)  # drawn first
        scale = 0.05
        self.params = {"w1": w1, "b1": np.full(hidden, 0.1, dtype=np.float32)}
        if layer2:  # every stack starts alike
            l2w = (rng.standard_normal((2 * hidden, layer2)) / np.sqrt(2 * hidden)).astype(np.float32)
            layers = buckets if stacks else 1
            self.params["l2w"] = np.tile(l2w, (layers, 1, 1))
            self.params["l2b"] = np.full((layers, layer2), 0.1, dtype=np.float32)
            w3 = (rng.standard_normal(layer2) * scale).astype(np.float32)
            self.params["w3"], self.params["b3"] = np.tile(w3, (buckets, 1)), np.zeros(buckets, dtype=np.float32)
        else:
            w2 = (rng.standard_normal(2 * hidden) * scale).astype(np.float32)
            self.params["w2"], self.params["b2"] = np.tile(w2, (buckets, 1)), np.zeros(buckets, dtype=np.float32)
        self.moments = {key: (np.zeros_like(value), np.zeros_like(value)) for key, value in self.params.items()}
        self.steps = 0

    def start_from(self, net: Net) -> None:
        """Take `net`'s weights (a file's integers, scaled back) as the starting point: fine-tuning.

        Why: a trained net is most of the way to a related one.  With
        `stacks` each bucket's layer starts as `net`'s shared one, and the
        epochs teach the buckets apart; training from random weights would
        redo the whole hour to get back to where `net` is.  The architecture
        must match (raises ValueError naming what differs).
        """
        layers = self.stacks
        mine = (self.hidden, self.buckets, self.layer2)
        theirs = (net.hidden, net.buckets, 0 if net.deep is None else net.deep.size)
        if (mine != theirs or (net.deep is not None and net.deep.stacks not in (1, layers))
                or (net.qa, net.qb, net.cp_scale) != (QA, QB, CP_SCALE)):
            raise ValueError(f"{net.name} ({net.architecture}) does not fit the net to train "
                             f"(hidden {mine[0]}, buckets {mine[1]}, layer2 {mine[2]}, "
                             f"stacks {layers}, qa {QA}, qb {QB}, cp_scale {CP_SCALE})")
        p = self.params
        p["w1"] = (net.w1 / QA).astype(np.float32)
        p["b1"] = (net.b1 / QA).astype(np.float32)
        if net.deep is None:
            p["w2"] = (net.w2 / QB).astype(np.float32)
            p["b2"] = (np.array(net.b2, dtype=np.float64) / (QA * QB)).astype(np.float32)
        else:
            deep = net.deep
            p["l2w"] = np.repeat(deep.weight, layers // deep.stacks, axis=0)  # copies, writable
            p["l2b"] = np.repeat(deep.bias, layers // deep.stacks, axis=0)
            p["w3"], p["b3"] = deep.out_weight.copy(), deep.out_bias.copy()
        self.moments = {key: (np.zeros_like(value), np.zeros_like(value)) for key, value in p.items()}
        self.steps = 0

    @property
    def hidden(self) -> int:
        return self.params["b1"].shape[0]

    @property
    def layer2(self) -> int:
        return self.params["l2b"].shape[1] if "l2b" in self.params else 0

    @property
    def stacks(self) -> int:
        """Second layers: 1 (shared, or none), or one per output bucket."""
        return self.params["l2b"].shape[0] if "l2b" in self.params else 1

    def _stack_rows(self, n: int, bucket: np.ndarray | None) -> list[tuple[int, np.ndarray | slice]]:
        """Each second layer with the batch rows that use it (all rows: layer 0, as a slice)."""
        if self.stacks == 1 or bucket is None:
            return [(0, slice(0, n))]
        return [(stack, rows) for stack in range(self.stacks) if len(rows := np.nonzero(bucket == stack)[0])]

    @property
    def buckets(self) -> int:
        return self.params["b3" if self.layer2 else "b2"].shape[0]

    def _head(self) -> tuple[np.ndarray, np.ndarray]:
        """The output layer's (weights B x inputs, biases B)."""
        return (self.params["w3"], self.params["b3"]) if self.layer2 else (self.params["w2"], self.params["b2"])

    def _out(self, parts: list[np.ndarray], bucket: np.ndarray | None) -> np.ndarray:
        """The output layer on its inputs, given as `parts` whose columns, side by side, are the head's inputs."""
        w, b = self._head()
        single = self.buckets == 1 or bucket is None
        out = b[0] if single else b[bucket]
        for x, columns in self._columns(parts):
            out = out + (x @ w[0, columns] if single else np.einsum("ij,ij->i", x, w[bucket, columns]))
        return out

    def _out_grads(self, parts: list[np.ndarray], g_out: np.ndarray,
                   bucket: np.ndarray | None) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
        """(gradient of each part, of the output weights, of the output biases)."""
        w, _ = self._head()
        if self.buckets == 1 or bucket is None:
            pieces = [(np.outer(g_out, w[0, columns]), x.T @ g_out) for x, columns in self._columns(parts)]
            return ([g for g, _ in pieces], np.concatenate([g for _, g in pieces])[None, :],
                    np.array([g_out.sum()], dtype=np.float32))
        # Each row's gradient goes to its own bucket's head: a (B x n) scatter matrix times x.
        scatter = np.zeros((self.buckets, len(g_out)), dtype=np.float32)
        scatter[bucket, np.arange(len(g_out))] = g_out
        pieces = [(g_out[:, None] * w[bucket, columns], scatter @ x) for x, columns in self._columns(parts)]
        return ([g for g, _ in pieces], np.concatenate([g for _, g in pieces], axis=1),
                np.bincount(bucket, weights=g_out, minlength=self.buckets).astype(np.float32))

    @staticmethod
    def _columns(parts: list[np.ndarray]) -> list[tuple[np.ndarray, slice]]:
        """Each part with the head's input columns it fills."""
        starts = np.cumsum([0] + [x.shape[1] for x in parts])
        return [(x, slice(int(start), int(start) + x.shape[1])) for x, start in zip(parts, starts)]

    def _accumulators(self, stm, other) -> tuple[scipy.sparse.csr_matrix, np.ndarray]:
        """(both perspectives' inputs stacked, their clipped first-layer activations stacked the same way).

        Rows 0..n-1 are the side to move's, n..2n-1 the other side's; the
        engine puts them side by side (n x 2H), the trainer on top of each
        other.  Hot loop: these 2n x H arrays are most of a step's time, and
        stacked they come from one sparse product, are clipped in place, and
        go back to one sparse product as one contiguous gradient, with no
        concatenation or slice copies.  `_reference_loss` in the tests is the
        plain version.
        """
        both = scipy.sparse.vstack([stm, other], format="csr")
        a = both @ self.params["w1"]
        a += self.params["b1"]
        np.clip(a, 0, 1, out=a)
        return both, a

    def forward(self, stm, other, bucket: np.ndarray | None = None) -> tuple[np.ndarray, tuple]:
        """Output in units of CP_SCALE centipawns, and what backward needs."""
        both, a = self._accumulators(stm, other)
        n, h = stm.shape[0], self.hidden
        if not self.layer2:
            return self._out([a[:n], a[n:]], bucket), (both, a, None, None)
        l2w, l2b = self.params["l2w"], self.params["l2b"]
        mine, theirs = a[:n], a[n:]
        stacks = self._stack_rows(n, bucket)
        if len(stacks) == 1:  # one layer for every row: no scatter
            stack = stacks[0][0]
            z = mine @ l2w[stack, :h] + theirs @ l2w[stack, h:] + l2b[stack]
        else:
            z = np.empty((n, self.layer2), dtype=np.float32)
            for stack, rows in stacks:
                z[rows] = mine[rows] @ l2w[stack, :h] + theirs[rows] @ l2w[stack, h:] + l2b[stack]
        return self._out([np.clip(z, 0, 1)], bucket), (both, a, z, stacks)

    def loss_and_grads(self, stm, other, target: np.ndarray,
                       bucket: np.ndarray | None = None) -> tuple[float, dict[str, np.ndarray]]:
        """Loss and gradients on a batch."""
        out, (both, a, z, stacks) = self.forward(stm, other, bucket)
        prob = 1 / (1 + np.exp(-out * CP_SCALE / K))
        diff = prob - target
        loss = float(np.mean(diff * diff))
        g_out = (2 / len(target)) * diff * prob * (1 - prob) * (CP_SCALE / K)
        n, h = len(target), self.hidden
        grads = {}
        if self.layer2:
            (g_x,), grads["w3"], grads["b3"] = self._out_grads([np.clip(z, 0, 1)], g_out, bucket)
            g_z = (g_x * ((z > 0) & (z < 1))).astype(np.float32)
            l2w = self.params["l2w"]
            grads["l2w"], grads["l2b"] = np.zeros_like(l2w), np.zeros_like(self.params["l2b"])
            g_a = np.empty_like(a)
            mine, theirs, g_mine, g_theirs = a[:n], a[n:], g_a[:n], g_a[n:]
            for stack, rows in stacks:  # forward's routing of the rows
                g = g_z[rows]
                grads["l2w"][stack, :h] = mine[rows].T @ g
                grads["l2w"][stack, h:] = theirs[rows].T @ g
                grads["l2b"][stack] = g.sum(axis=0)
                if isinstance(rows, slice):  # every row: straight into place
                    np.matmul(g, l2w[stack, :h].T, out=g_mine)
                    np.matmul(g, l2w[stack, h:].T, out=g_theirs)
                else:
                    g_mine[rows] = g @ l2w[stack, :h].T
                    g_theirs[rows] = g @ l2w[stack, h:].T
        else:
            g_parts, grads["w2"], grads["b2"] = self._out_grads([a[:n], a[n:]], g_out, bucket)
            g_a = np.concatenate(g_parts).astype(np.float32, copy=False)
        g_a *= (a > 0) & (a < 1)  # the clip passes the gradient inside (0, 1) only
        grads["w1"] = np.asarray(both.T @ g_a, dtype=np.float32)
        grads["b1"] = g_a.sum(axis=0)
        return loss, {key: value.astype(np.float32, copy=False) for key, value in grads.items()}

    def loss(self, stm, other, target: np.ndarray, bucket: np.ndarray | None = None) -> float:
        """The mean loss on these positions, scored a slice at a time (`cp`)."""
        return played_loss(self.cp(stm, other, bucket), target)

    def adam(self, grads: dict[str, np.ndarray], lr: float, weight_decay: float = 0.0,
             beta1: float = 0.9, beta2: float = 0.999) -> None:
        """One Adam step, with decoupled weight decay (AdamW) on the weights, not the biases."""
        self.steps += 1
        if weight_decay:
            for key in ("w1", "w2", "l2w", "w3"):
                if key in self.params:
                    self.params[key] *= 1 - lr * weight_decay
        for key, grad in grads.items():
            m, v = self.moments[key]
            m *= beta1
            m += (1 - beta1) * grad
            v *= beta2
            v += (1 - beta2) * grad * grad
            m_hat = m / (1 - beta1 ** self.steps)
            v_hat = v / (1 - beta2 ** self.steps)
            self.params[key] -= lr * m_hat / (np.sqrt(v_hat) + 1e-8)
        # Keep the quantised weights within int16.
        np.clip(self.params["w1"], -INT16_LIMIT / QA, INT16_LIMIT / QA, out=self.params["w1"])
        if "w2" in self.params:
            np.clip(self.params["w2"], -INT16_LIMIT / QB, INT16_LIMIT / QB, out=self.params["w2"])

    def cp(self, stm, other, bucket: np.ndarray | None = None) -> np.ndarray:
        return in_slices(lambda rows: self.forward(stm[rows], other[rows], _rows(bucket, rows))[0] * CP_SCALE,
                         stm.shape[0])


def _int16(values: np.ndarray) -> np.ndarray:
    """Rounded to integers and held within int16 (a plain cast would wrap a large value round to the other sign)."""
    return np.clip(np.round(values), -INT16_LIMIT, INT16_LIMIT).astype(np.int16)


def quantise(net: FloatNet, name: str = "<trained>", correction_scale: float = 1.0) -> Net:
    """The integer net; its output multiplied by `correction_scale` (1: as trained)."""
    p = net.params
    first = dict(hidden=net.hidden, qa=QA, qb=QB, cp_scale=CP_SCALE, name=name,
                 w1=_int16(p["w1"] * QA), b1=_int16(p["b1"] * QA))
    if net.layer2:  # the layers after the accumulators stay float32
        deep = DeepHead(p["l2w"], p["l2b"], p["w3"] * correction_scale, p["b3"] * correction_scale)
        return Net(**first, w2=np.zeros((net.buckets, 2 * net.hidden), np.int16), b2=(0,) * net.buckets, deep=deep)
    return Net(**first, w2=_int16(p["w2"] * QB * correction_scale),
               b2=tuple(int(round(float(b) * QA * QB * correction_scale)) for b in p["b2"]))


def played_loss(cp: np.ndarray, target: np.ndarray) -> float:
    """The loss of centipawn scores against the targets (win probabilities)."""
    return float(np.mean((1 / (1 + np.exp(-cp / K)) - target) ** 2))


#: Positions scored at a time by `FloatNet.cp` and `quantised_cp`.
SLICE_ROWS = 65536


def in_slices(score, count: int) -> np.ndarray:
    """`score(slice)` over `count` positions, SLICE_ROWS at a time, joined.

    Why: a whole held-out set at once is n x 2H int64 accumulators and an
    n x (2H + 1) head input, over 10 GB for 567k positions at 512 units.
    """
    return np.concatenate([score(slice(start, start + SLICE_ROWS)) for start in range(0, count, SLICE_ROWS)]
                          or [np.zeros(0)])


def _rows(bucket: np.ndarray | None, rows: slice) -> np.ndarray | None:
    return None if bucket is None else bucket[rows]


def quantised_cp(net: Net, stm, other, bucket: np.ndarray | None = None) -> np.ndarray:
    """The integer net's centipawns on a batch (the engine's arithmetic, vectorised), 65,536 positions at a time."""
    return in_slices(lambda rows: _quantised_cp(net, stm[rows], other[rows], _rows(bucket, rows)), stm.shape[0])


def _quantised_cp(net: Net, stm, other, bucket: np.ndarray | None) -> np.ndarray:
    if bucket is None:
        bucket = np.zeros(stm.shape[0], dtype=np.intp)
    w1 = net.w1.astype(np.int64)
    a_stm = np.clip(stm.astype(np.int64) @ w1 + net.b1, 0, net.qa)
    a_other = np.clip(other.astype(np.int64) @ w1 + net.b1, 0, net.qa)
    h = net.hidden
    if net.deep is not None:  # the engine's exact arithmetic (`DeepTables`): a batch scores as each position alone
        tables = net.deep_tables
        inputs = np.concatenate([a_stm, a_other, np.ones((len(a_stm), 1), np.int64)], axis=1).astype(tables.dtype)
        z = np.empty((len(inputs), net.deep.size))
        for stack in range(net.deep.stacks):  # a stack's first bucket's table; White's: side to move first
            rows = bucket == stack if net.deep.stacks > 1 else slice(None)  # with stacks, stack = bucket
            z[rows] = np.clip(inputs[rows] @ tables.inputs[stack][chess.WHITE].T, 0.0, tables.top)
        out = np.einsum("ij,ij->i", z, np.array(tables.out)[bucket]) + np.array(tables.out_bias, np.float64)[bucket]
        return (out.astype(np.int64).astype(object) * net.cp_scale // tables.divisor).astype(np.int64)
    w2 = net.w2.astype(np.int64)[bucket]
    total = np.einsum("ij,ij->i", a_stm, w2[:, :h]) + np.einsum("ij,ij->i", a_other, w2[:, h:])
    return (total + np.array(net.b2, dtype=np.int64)[bucket]) * net.cp_scale // (net.qa * net.qb)
