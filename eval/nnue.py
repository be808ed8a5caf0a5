"""The learned evaluation: a perspective network over (piece, square) features.

Architecture ("768 -> H x 2 -> 1"):

* Features: for a perspective (White or Black), one per piece on the board:
  ``64 * (6 * (piece is the perspective's opponent's) + type - 1) + square``,
  with the square flipped vertically (``square ^ 56``) for Black, so both
  perspectives see "their" pieces from their own first rank.
* Feature transformer: each perspective's accumulator is ``b1 + sum of the
  rows W1[feature]``, H integers.  Both perspectives share W1 and b1.
* Head: the side to move's accumulator, then the other's, each clipped to
  [0, QA] (clipped ReLU), dotted with w2 (2H), plus b2; the integer sum times
  ``CP_SCALE / (QA * QB)`` is the score in centipawns for the side to move.
* Output buckets (version 3): B heads (w2, b2), one per material bucket;
  a position with P pieces (kings included) uses head
  ``(P - 1) * B // 32``.  Why: what a unit of the accumulator is worth
  changes from the middlegame to the endgame (a passed pawn, a king's
  activity); separate heads learn that for the price of one index, and the
  accumulators stay shared.  B = 1 is the single head of versions 1 and 2.
* Second hidden layer (version 3, ``layer2 = L > 0``): instead of w2, the
  clipped accumulators divided by QA, side to move first, go through an
  L-unit layer (``weight`` 2H x L, ``bias``; one per bucket with layer
  stacks, below), clipped to [0, 1], and one of
  B outputs (``out_weight``, ``out_bias``); the output times ``cp_scale``,
  rounded down, is the score.  The file keeps these as float32; the engine
  runs them as exact integers (`DeepTables`: weights times a power of two,
  rounded, biases scaled to match), the second layer in float32 (float64
  for a net whose weights are too large for that) and the output layer in
  float64; `eval.nnue_layers` says why.
* Layer stacks (version 4, ``stacks = B``): each output bucket has its own
  second layer (weight and bias), picked by the same piece count.

Because the features are relative to the side to move, a position and its
colour-mirrored twin get exactly the same score.

The search keeps both accumulators up to date move by move
(`eval.accumulator`, called by `search.position.Position`): a move changes
two to four features, so a node
pays a few vector additions instead of a full sum.  They are kept side by side
in one numpy vector (float32 integers, `Net.acc_dtype`), [White's H | Black's H], and each feature has a
"dual row" (its White-perspective row beside its Black-perspective row), so
that one addition updates both perspectives.  numpy is the measured faster
representation here (docs/nnue.md): a pure-Python list or packed-int head
costs more per evaluation than numpy's call overhead.

Net file format (``.nnue``, little-endian), nothing executed on load:

    magic        4 bytes  b"PSNN"
    version      u16      3 or 4
    features     u16      1 = 768 piece-square features
    hidden       u16      H
    qa, qb       u16 u16  quantisation scales of the accumulator and of w2
    cp_scale     u16      centipawns per unit of the float output
    base         u16      0 (reserved)
    buckets      u16      B output buckets (1 to 32)
    layer2       u16      L units of a second layer, 0 none
    stacks       u16      version 4 only: S second layers, 1 (shared) or B
                          (one per output bucket; needs L > 0); 1 before
                          version 4
    W1           i16[768][H]
    b1           i16[H]
    then, without a second layer:
    w2           i16[B][2H]  side to move's half first
    b2           i32[B]
    or with one:
    weight       f32[S][2H][L]  side to move's rows first
    bias         f32[S][L]
    out_weight   f32[B][L]
    out_bias     f32[B]
    crc32        u32      of every byte before it

Versions 1 and 2, and the designs no bundled net has used since (king
buckets: feature set 2; the classical evaluation as a base the net corrects:
base 1), are refused with a message that says so; the commit before the
refusal, f9f92d63, still reads them.
"""
from __future__ import annotations

import functools
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import chess
import numpy as np

from eval.nnue_layers import DEEP_SCALE, EXACT_LIMIT, MAX_LAYER2, DeepHead, DeepTables  # noqa: F401 (re-exported)

MAGIC = b"PSNN"
#: The newest version this engine reads; it writes 3, or 4 only where layer stacks need it.
VERSION = 4
#: The header's feature set: 768 piece-square features, the only one read.
FEATURES_768 = 1
#: The header's base: none (the net alone), the only one read.
BASE_NONE = 0
#: Designs earlier nets used, refused by name (king buckets; the classical evaluation as a base).
RETIRED_KING_BUCKETS, RETIRED_CLASSICAL_BASE = 2, 1
INPUTS = 768
HEADER = struct.Struct("<4sHHHHHHH")
#: Version 3 appends the number of output buckets and the second layer's size to the header.
EXTENSION = struct.Struct("<HH")
#: Version 4 appends the number of second layers (1, or one per output bucket).
STACKS = struct.Struct("<H")
MAX_BUCKETS = 32
#: Larger than any net the header's limits allow (hidden 4096, layer2 256, 32 stacks: about 275 MB);
#: a bigger file is refused before it is read.
MAX_NET_BYTES = 300 << 20
BUNDLED = Path(__file__).with_name("default.nnue")
#: numpy's clip ufunc itself, for the search's once-a-node clipped ReLU.
#: `np.clip` and `ndarray.clip` wrap it in Python-level argument handling
#: that costs several times the clip of 256 numbers (docs/nnue.md, session
#: 31); the ufunc lives in ``numpy._core`` (``numpy.core`` before numpy 2).
clip_into = (getattr(np, "_core", None) or np.core).umath.clip
#: Whether the engine searches with the bundled net unless told otherwise
#: (`Use NNUE`'s default).  On since the first bundled net beat the
#: classical evaluation at 10+0.1 (docs/nnue.md).
USE_NNUE_DEFAULT = True


class NetError(ValueError):
    """A net file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class Net:
    """A quantised net, ready for incremental inference."""

    hidden: int
    qa: int
    qb: int
    cp_scale: int
    w1: np.ndarray  # int16 (768, H)
    b1: np.ndarray  # int16 (H,)
    w2: np.ndarray  # int16 (B, 2H); a (2H,) vector is taken as B = 1
    b2: tuple[int, ...]  # B biases; an int is taken as B = 1
    name: str = "<memory>"
    #: A second hidden layer; w2 and b2 are then zeros that only say B.
    deep: DeepHead | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "w2", np.atleast_2d(self.w2))
        b2 = (self.b2,) if isinstance(self.b2, (int, np.integer)) else self.b2
        object.__setattr__(self, "b2", tuple(int(b) for b in b2))
        if self.w2.shape != (len(self.b2), 2 * self.hidden) or not 1 <= len(self.b2) <= MAX_BUCKETS:
            raise ValueError(f"output weights {self.w2.shape} and {len(self.b2)} biases do not fit hidden {self.hidden}")
        if self.w1.shape != (INPUTS, self.hidden):
            raise ValueError(f"input weights {self.w1.shape} do not fit {INPUTS} inputs, hidden {self.hidden}")
        deep = self.deep
        if deep is not None and (deep.weight.shape[1:] != (2 * self.hidden, deep.size) or not 1 <= deep.size <= MAX_LAYER2
                                 or deep.stacks not in (1, self.buckets) or deep.bias.shape != (deep.stacks, deep.size)
                                 or deep.out_weight.shape != (self.buckets, deep.size)
                                 or deep.out_bias.shape != (self.buckets,)):
            raise ValueError(f"second layer {deep.weight.shape} (bias {deep.bias.shape}) -> {deep.out_weight.shape} "
                             f"does not fit hidden {self.hidden} and {self.buckets} buckets (stacks: 1 or the buckets)")

    @property
    def architecture(self) -> str:
        """In words, for `info string`: "768->128x2->1", "768->512x2->32->8 (output buckets, layer stacks)"."""
        extras = ["output buckets"] if self.buckets > 1 else []
        layer2 = f"->{self.deep.size}" if self.deep is not None else ""
        if self.deep is not None and self.deep.stacks > 1:
            extras.append("layer stacks")
        return f"{INPUTS}->{self.hidden}x2{layer2}->{self.buckets}" + (f" ({', '.join(extras)})" if extras else "")

    def feature(self, perspective: chess.Color, colour: chess.Color, piece_type: int, square: int) -> int:
        """A piece's input index for one perspective (the module docstring's formula)."""
        if perspective == chess.BLACK:
            square ^= 56
        return 64 * (6 * (colour != perspective) + piece_type - 1) + square

    @property
    def buckets(self) -> int:
        return len(self.b2)

    @functools.cached_property
    def bucket_of(self) -> tuple[int, ...]:
        """The output bucket of a position by its number of pieces (index 0..32)."""
        return tuple(max(0, pieces - 1) * self.buckets // 32 for pieces in range(33))

    @functools.cached_property
    def dual_rows(self) -> list[np.ndarray]:
        """rows[12 * 64]: White's row beside Black's row of (colour, type, square), each (2H,) of `acc_dtype`.

        Indexed by ``64 * (6 * (colour == BLACK) + type - 1) + square``:
        `eval.accumulator` adds one per feature a move changes.  A list of
        rows, not one (768, 2H) array: a list item is fetched in a sixth of
        the time numpy makes a row view, and numpy adds it faster (a push's
        two or three row updates: 1.1 -> 0.8 µs).
        """
        white = np.arange(INPUTS)
        colour_black = white // 384  # 0 White piece, 1 Black piece
        piece = (white // 64) % 6
        square = white % 64
        black_index = 64 * (6 * (1 - colour_black) + piece) + (square ^ 56)
        return list(np.concatenate([self.w1[white], self.w1[black_index]], axis=1).astype(self.acc_dtype))

    @functools.cached_property
    def move_deltas(self) -> list[np.ndarray | None]:
        """A piece's step as one dual row, its arrival's less its departure's, by ``departure's row << 6 | arrival``.

        A move then costs the accumulator one addition, not an addition and
        a subtraction (about 0.8 µs a push less).  Made as moves are first
        made (`eval.accumulator.Accumulator.moved`), and kept with the net:
        of the 49,152 slots (12 pieces, 64 squares, 64 arrivals) the rules
        let a piece reach about 7,600 (both colours, promotions aside), at
        4 KiB each for the bundled net: at most about 30 MiB, and a search
        meets far fewer.  Exact: a difference of two int16 weights.
        """
        return [None] * (INPUTS * 64)

    @functools.cached_property
    def acc_dtype(self) -> type:
        """The accumulator's float type: the one the layer after it reads, so that its clip converts nothing.

        A converting clip costs twice a plain one.  Either type holds the
        accumulator exactly: int16 weights, a sum of the bias and at most
        32 rows plus the one a move adds before it takes one away, far
        below 2**24.  So float32 for a second layer in float32, float64 for
        the head and a second layer too large for float32.
        """
        if self.deep is not None and self.deep_tables.dtype == np.float32:
            return np.float32
        return np.float64

    @functools.cached_property
    def head(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """Per bucket, the output weights laid over [White | Black] for White to move, and for Black to move.

        float64, like the accumulator then (`acc_dtype`): the products of
        clipped accumulators and int16 weights, summed over 2H, pass
        float32's exact range (2**24).
        """
        h = self.hidden
        heads = []
        for w2 in self.w2.astype(np.float64):
            heads.append((np.concatenate([w2[h:], w2[:h]]), w2))  # index by the bool turn
        return tuple(heads)

    def bias(self) -> np.ndarray:
        b1 = self.b1.astype(self.acc_dtype)
        return np.concatenate([b1, b1])

    def accumulator(self, board: chess.Board) -> np.ndarray:
        """[White's accumulator | Black's], computed from scratch."""
        acc = self.bias()
        rows = self.dual_rows
        for square, piece in board.piece_map().items():
            acc += rows[64 * (6 * (not piece.color) + piece.piece_type - 1) + square]
        return acc

    def score(self, acc: np.ndarray, turn: chess.Color, pieces: int) -> int:
        """The head's centipawns for the side to move from the dual accumulator.

        `pieces` (kings included) picks the output bucket.
        """
        bucket = self.bucket_of[pieces]
        if self.deep is not None:
            inputs = self.deep_inputs()
            np.clip(acc, 0, self.qa, out=inputs[:-1])
            return self.deep_score(inputs, turn, bucket)
        total = int(np.dot(np.clip(acc, 0, self.qa), self.head[bucket][turn])) + self.b2[bucket]
        return total * self.cp_scale // (self.qa * self.qb)

    @functools.cached_property
    def deep_tables(self) -> DeepTables:
        assert self.deep is not None
        return DeepTables.of(self.deep, self.hidden, self.qa)

    def deep_inputs(self) -> np.ndarray:
        """A fresh input vector for `deep_score`: 2H slots for the clipped accumulator, then the constant 1."""
        return np.ones(2 * self.hidden + 1, self.deep_tables.dtype)

    def deep_score(self, inputs: np.ndarray, turn: chess.Color, bucket: int) -> int:
        """Centipawns through the second layer from [White's clipped H | Black's clipped H | 1] (`deep_inputs`).

        Hot path (once a node): three numpy calls on tables prepared once
        (the `.dot` methods cost a third less than `@` on vectors this
        small); exact integer arithmetic, so `tests/test_nnue.py` checks it
        against the same sums in Python integers.
        """
        tables = self.deep_tables
        z = tables.inputs[bucket][turn].dot(inputs)
        clip_into(z, 0.0, tables.top, out=z)
        return (int(z.dot(tables.out[bucket])) + tables.out_bias[bucket]) * self.cp_scale // tables.divisor

    def evaluate(self, board: chess.Board) -> int:
        """The net's score for the side to move, from scratch (the reference for the incremental one)."""
        return self.score(self.accumulator(board), board.turn, chess.popcount(board.occupied))

    def to_bytes(self) -> bytes:
        deep = self.deep
        stacks = 1 if deep is None else deep.stacks
        version = 4 if stacks > 1 else 3  # what an older engine can read stays readable to it
        body = HEADER.pack(MAGIC, version, FEATURES_768, self.hidden, self.qa, self.qb, self.cp_scale, BASE_NONE)
        body += EXTENSION.pack(self.buckets, 0 if deep is None else deep.size)
        if version >= 4:
            body += STACKS.pack(stacks)
        body += self.w1.astype("<i2").tobytes() + self.b1.astype("<i2").tobytes()
        if deep is None:
            body += self.w2.astype("<i2").tobytes() + struct.pack(f"<{self.buckets}i", *self.b2)
        else:
            body += b"".join(array.astype("<f4").tobytes() for array in (deep.weight, deep.bias, deep.out_weight,
                                                                        deep.out_bias))
        return body + struct.pack("<I", zlib.crc32(body))

    def save(self, path: str | Path) -> None:
        Path(path).write_bytes(self.to_bytes())


def from_bytes(data: bytes, name: str = "<bytes>") -> Net:
    """Parse and check a net file's bytes; raises NetError naming `name` and the problem."""
    if len(data) < HEADER.size + 4:
        raise NetError(f"{name}: truncated ({len(data)} bytes)")
    magic, version, feature_set, hidden, qa, qb, cp_scale, base = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise NetError(f"{name}: not a Pawnstorm net (magic {magic!r})")
    if version not in (3, VERSION):
        raise NetError(f"{name}: unsupported version {version} (this engine reads 3 and {VERSION}; "
                       f"older nets were read up to commit f9f92d63)")
    if feature_set == RETIRED_KING_BUCKETS:
        raise NetError(f"{name}: feature set {feature_set} (king buckets) is no longer supported "
                       f"(this engine reads 768 piece-square features; commit f9f92d63 read it)")
    if base == RETIRED_CLASSICAL_BASE:
        raise NetError(f"{name}: base {base} (a correction to the classical evaluation) is no longer supported "
                       f"(this engine reads nets alone; commit f9f92d63 read it)")
    if base != BASE_NONE:
        raise NetError(f"{name}: unsupported base {base}")
    at = HEADER.size
    stacks = 1
    if len(data) < at + EXTENSION.size + STACKS.size * (version >= 4) + 4:
        raise NetError(f"{name}: truncated ({len(data)} bytes)")
    buckets, layer2 = EXTENSION.unpack_from(data, at)
    at += EXTENSION.size
    if version >= 4:
        (stacks,) = STACKS.unpack_from(data, at)
        at += STACKS.size
    if (feature_set != FEATURES_768 or not 1 <= hidden <= 4096
            or qa == 0 or qb == 0 or cp_scale == 0 or not 1 <= buckets <= MAX_BUCKETS or layer2 > MAX_LAYER2
            or stacks not in (1, buckets) or (stacks > 1 and not layer2)):
        raise NetError(f"{name}: unsupported architecture (features {feature_set}, hidden {hidden}, qa {qa}, qb {qb}, "
                       f"buckets {buckets}, layer2 {layer2}, stacks {stacks})")
    inputs = INPUTS
    head = (4 * (stacks * (2 * hidden * layer2 + layer2) + buckets * layer2 + buckets) if layer2
            else 2 * buckets * 2 * hidden + 4 * buckets)
    expected = at + 2 * (inputs * hidden + hidden) + head + 4
    if len(data) != expected:
        raise NetError(f"{name}: {len(data)} bytes, the header's architecture needs {expected} (truncated or wrong architecture)")
    (crc,) = struct.unpack_from("<I", data, expected - 4)
    if zlib.crc32(data[:expected - 4]) != crc:
        raise NetError(f"{name}: checksum mismatch (corrupt file)")
    w1 = np.frombuffer(data, "<i2", inputs * hidden, at).reshape(inputs, hidden).astype(np.int16)
    at += 2 * inputs * hidden
    b1 = np.frombuffer(data, "<i2", hidden, at).astype(np.int16)
    at += 2 * hidden
    if layer2:
        shapes = ((stacks, 2 * hidden, layer2), (stacks, layer2), (buckets, layer2), (buckets,))
        arrays = []
        for shape in shapes:
            count = int(np.prod(shape))
            arrays.append(np.frombuffer(data, "<f4", count, at).reshape(shape).astype(np.float32))
            at += 4 * count
        if not all(np.isfinite(array).all() for array in arrays):
            raise NetError(f"{name}: the second layer holds a value that is not a finite number")
        net = Net(hidden, qa, qb, cp_scale, w1, b1, np.zeros((buckets, 2 * hidden), np.int16), (0,) * buckets,
                  name, DeepHead(*arrays))
        if not net.deep_tables.exact:
            raise NetError(f"{name}: the second layer's weights are too large for exact arithmetic")
        return net
    w2 = np.frombuffer(data, "<i2", buckets * 2 * hidden, at).reshape(buckets, 2 * hidden).astype(np.int16)
    at += 4 * hidden * buckets
    b2 = struct.unpack_from(f"<{buckets}i", data, at)
    return Net(hidden, qa, qb, cp_scale, w1, b1, w2, b2, name)


def load(path: str | Path) -> Net:
    """Read a net file; raises NetError naming the file and the problem.

    Only a regular file of a net's possible size is read: a device, a pipe
    or a huge file would hang or fill the memory first.
    """
    try:
        file = Path(path)
        if not file.is_file():
            raise NetError(f"{path}: cannot read ({'not a regular file' if file.exists() else 'no such file'})")
        size = file.stat().st_size
        if size > MAX_NET_BYTES:
            raise NetError(f"{path}: {size:,} bytes, larger than any net ({MAX_NET_BYTES:,} at most)")
        data = file.read_bytes()
    except (OSError, ValueError) as error:  # (ValueError: a path with a NUL byte)
        if isinstance(error, NetError):
            raise
        raise NetError(f"{path}: cannot read ({getattr(error, 'strerror', None) or error})") from None
    return from_bytes(data, str(path))


def default_net() -> Net | None:
    """What the engine searches with by default: the bundled net if `USE_NNUE_DEFAULT`, else None (classical)."""
    return bundled_net() if USE_NNUE_DEFAULT else None


@functools.lru_cache(maxsize=1)
def _load_bundled() -> tuple[Net | None, str | None]:
    try:
        return load(BUNDLED), None
    except NetError as error:
        return None, str(error)


def bundled_net() -> Net | None:
    """The net shipped with the engine, or None if it is missing or unusable (then: classical)."""
    return _load_bundled()[0]


def bundled_net_problem() -> str | None:
    """Why the bundled net could not be used (the file and the problem), or None when it loaded."""
    return _load_bundled()[1]
