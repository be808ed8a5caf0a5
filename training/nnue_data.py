"""The trainer's view of the labelled positions: records, targets, inputs.

`training.nnue` trains on what this module makes of the chunk files: the
de-duplicated records (`load_chunks`), the targets (`targets`), the held-out
split (`holdout_files`), each position's output bucket (`output_buckets`),
and the sparse inputs of both perspectives (`feature_matrices`, built batch
by batch by `Inputs`).  The feature indices are `eval.nnue`'s, and tests
check the engine computes the same ones.
"""
from __future__ import annotations

import zlib

import numpy as np
import scipy.sparse

from eval.nnue import INPUTS
from training.chunks import SUFFIX_V1, Chunk, chunk_name, read_raw
from training.records import RECORD_SIZE, RESULT_UNKNOWN, DataFormatError

#: The win-probability scale of a centipawn score (sigmoid(cp / K)).
K = 400.0
#: The teacher's share of the target; the game result has the rest.  0.8 is
#: the bundled net's (s48-alone; s46-l08 took +70.6 over 1.0 in games, and
#: 0.6 screened even with it, docs/nnue.md sessions 46-48).
LAMBDA = 0.8
#: Teacher scores are clamped to this many centipawns.
SCORE_CLAMP = 3000
#: `play_game_results`: a ``play`` game whose last labelled position the
#: teacher scores at least this far from zero is won by that side (the games
#: end at 2,000 for four plies; 87% of them end beyond 1,000 either way).
#: Measured in session 52: a net trained with these results lost its
#: screen 0-10-1 and fits the teacher worse (docs/nnue.md); off by default.
PLAY_RESULT_MARGIN = 1000

RECORD_DTYPE = np.dtype([("occupied", "<u8"), ("pieces", "u1", 16), ("score", "<i2"), ("result", "u1"),
                         ("turn", "u1"), ("fullmove", "<u2"), ("halfmove", "u1"), ("flags", "u1")])
assert RECORD_DTYPE.itemsize == RECORD_SIZE


# --- data ---------------------------------------------------------------------

def load_chunks(paths: list[Chunk], play_results: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """All records of the chunk files, de-duplicated (first occurrence kept), and each one's file index.

    With `play_results`, the records of the teacher's own games (``play``
    chunks, stored with the result unknown) take the result of their game
    as `play_game_results` infers it, so that the target blends a result
    into them as it does for the other games.
    """
    arrays = [np.frombuffer(read_raw(path), RECORD_DTYPE) for path in paths]
    if play_results:
        arrays = [with_play_results(array) if chunk_name(path).startswith("play-") else array
                  for path, array in zip(paths, arrays)]
    if not arrays:
        raise DataFormatError("no chunk files")
    records = np.concatenate(arrays)
    files = np.repeat(np.arange(len(arrays)), [len(array) for array in arrays])
    identity = np.zeros(len(records), dtype=[("occupied", "<u8"), ("pieces", "u1", 16), ("turn", "u1")])
    for name in identity.dtype.names:
        identity[name] = records[name]
    _, first = np.unique(identity, return_index=True)
    first = np.sort(first)
    return records[first], files[first]


def game_starts(records: np.ndarray) -> np.ndarray:
    """Where each game of a chunk begins: the records of one game come in order, so the ply goes up and material never comes back.

    A ``play`` chunk stores its games one after the other without a
    marker; the next game starts from the opening (an earlier ply, more
    pieces).  One that starts later than the last kept position of the game
    before, with no more pieces, would be taken for its continuation: a
    game decided in its first plies followed by one with a longer opening,
    which is rare.
    """
    ply = 2 * (records["fullmove"].astype(np.int64) - 1) + records["turn"]
    pieces = np.array([int(occupied).bit_count() for occupied in records["occupied"]], dtype=np.int64)
    starts = np.ones(len(records), dtype=bool)
    starts[1:] = (ply[1:] <= ply[:-1]) | (pieces[1:] > pieces[:-1])
    return starts


def play_game_results(records: np.ndarray, margin: int = PLAY_RESULT_MARGIN) -> np.ndarray:
    """Each record's game result for the side to move (0 loss, 1 draw, 2 win), from how its game ended.

    A ``play`` game ends when the teacher's score has stood at 2,000 cp or
    more for four plies (`training.datagen.PLAY_DECIDED`), at a mate, or
    by a draw rule or at 300 plies.  So the game's last labelled position
    tells its result: a score at least `margin` from zero (White's view)
    won for that side, anything nearer zero is a draw.  Stalemating a won
    game would be scored as the win: rare at the teacher's depth.
    """
    starts = np.flatnonzero(game_starts(records))
    ends = np.append(starts[1:], len(records)) - 1
    white_view = np.where(records["turn"] == 0, 1, -1) * records["score"].astype(np.int64)
    last = white_view[ends]
    white_result = np.where(last >= margin, 2, np.where(last <= -margin, 0, 1))
    per_record = np.repeat(white_result, ends - starts + 1)
    return np.where(records["turn"] == 0, per_record, 2 - per_record).astype(np.uint8)


def with_play_results(records: np.ndarray) -> np.ndarray:
    """A copy of a ``play`` chunk's records with the results `play_game_results` infers."""
    inferred = records.copy()
    if len(inferred):
        inferred["result"] = play_game_results(inferred)
    return inferred


def load_records(paths: list[Chunk]) -> np.ndarray:
    """All records of the chunk files, de-duplicated (first occurrence kept)."""
    return load_chunks(paths)[0]


def piece_codes(records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, occupied): (N, 64) piece code per square (-1 empty) and the (N, 64) occupancy."""
    bits = ((records["occupied"][:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)).astype(bool)
    nibbles = np.empty((len(records), 32), dtype=np.int8)
    nibbles[:, 0::2] = records["pieces"] & 15
    nibbles[:, 1::2] = records["pieces"] >> 4
    rank = np.cumsum(bits, axis=1) - 1  # index of each occupied square's nibble
    codes = np.take_along_axis(nibbles, np.clip(rank, 0, 31), axis=1).astype(np.int16)
    codes[~bits] = -1
    return codes, bits


def feature_matrices(records: np.ndarray, mirror: bool = False) -> tuple[scipy.sparse.csr_matrix, scipy.sparse.csr_matrix]:
    """Sparse inputs of the side to move's and the other side's perspective (N x 768 each).

    With `mirror` the board is flipped from the a-file to the h-file first
    (square ^ 7): the records carry no castling rights, and chess is
    otherwise symmetric that way, so the twin is a new position with the
    same label (the "hm" of Stockfish's HalfKAv2_hm makes the same bet).
    """
    codes, bits = piece_codes(records)
    n = len(records)
    rows, squares = np.nonzero(bits)
    code = codes[rows, squares]  # the piece on each square, read before the board is turned
    if mirror:
        squares = squares ^ 7
    colour_black = code // 6  # 0 White piece
    piece = code % 6
    black_to_move = records["turn"][rows].astype(np.int16)
    # Perspective p (0 White, 1 Black): own pieces first, square flipped for Black.
    matrices = []
    for perspective_is_stm in (True, False):
        perspective = black_to_move if perspective_is_stm else 1 - black_to_move
        oriented = np.where(perspective == 1, squares ^ 56, squares)
        index = 64 * (6 * (colour_black != perspective) + piece) + oriented
        data = np.ones(len(rows), dtype=np.float32)
        matrices.append(scipy.sparse.csr_matrix((data, (rows, index)), shape=(n, INPUTS)))
    return matrices[0], matrices[1]


def output_buckets(records: np.ndarray, buckets: int) -> np.ndarray:
    """Each record's output bucket (`eval.nnue`): ``(pieces - 1) * buckets // 32``, kings included."""
    pieces = np.unpackbits(records["occupied"].astype("<u8").view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)
    return ((np.maximum(pieces.astype(np.int64), 1) - 1) * buckets // 32).astype(np.intp)


def targets(records: np.ndarray, teacher_share: float = LAMBDA) -> np.ndarray:
    """The blend of teacher and result; the teacher alone where the result is unknown."""
    score = np.clip(records["score"].astype(np.float64), -SCORE_CLAMP, SCORE_CLAMP)
    teacher = 1 / (1 + np.exp(-score / K))
    known = records["result"] != RESULT_UNKNOWN
    result = np.where(known, records["result"] / 2.0, teacher)
    return np.where(known, teacher_share * teacher + (1 - teacher_share) * result, teacher).astype(np.float32)


def holdout_files(paths: list[Chunk], share: float) -> np.ndarray:
    """Chunk files held out for validation, chosen by a hash of the file's name.

    Whole files, so whole games: positions of one game are alike, and a net
    that memorises a game would look better on its other positions than it
    is (a per-position split hid exactly that, docs/nnue.md).  The hash is
    of the chunk's version 1 file name, whatever the file's version, so that
    the held-out set stays the one every earlier net was measured on.
    """
    return np.array([zlib.crc32((chunk_name(path) + SUFFIX_V1).encode()) % 10_000 < share * 10_000 for path in paths],
                    dtype=bool)


def holdout_mask(records: np.ndarray, share: float) -> np.ndarray:
    """Positions held out for validation, chosen by a hash of the position (not by file order)."""
    mixed = (records["occupied"] * np.uint64(0x9E3779B97F4A7C15)) ^ records["pieces"][:, :8].copy().view("<u8")[:, 0]
    mixed ^= records["turn"].astype(np.uint64)
    return (mixed % np.uint64(10_000)) < np.uint64(share * 10_000)


class Inputs:
    """The sparse inputs of any rows of the training set, built when asked.

    Rows 0..n-1 are the records, n..2n-1 their mirrored twins (`--mirror`).
    Building a batch's two matrices costs a few milliseconds beside its
    products, and memory stays at the records' 32 bytes a position: whole-set
    matrices took about 800 bytes a position with the twins, so 15 million
    positions would not fit in this machine's 23 GB.
    """

    def __init__(self, records: np.ndarray) -> None:
        self.records = records

    def __call__(self, rows: np.ndarray) -> tuple[scipy.sparse.csr_matrix, scipy.sparse.csr_matrix]:
        n = len(self.records)
        twin = rows >= n
        if not twin.any():
            return feature_matrices(self.records[rows])
        if twin.all():
            return feature_matrices(self.records[rows - n], mirror=True)
        plain_stm, plain_other = feature_matrices(self.records[rows[~twin]])
        twin_stm, twin_other = feature_matrices(self.records[rows[twin] - n], mirror=True)
        back = np.argsort(np.concatenate([np.nonzero(~twin)[0], np.nonzero(twin)[0]]), kind="stable")
        return (scipy.sparse.vstack([plain_stm, twin_stm], format="csr")[back],
                scipy.sparse.vstack([plain_other, twin_other], format="csr")[back])
