"""Texel tuning features: the evaluation as a linear function of its weights.

Given the game phase, the evaluation of eval/evaluate.py is linear in its
weights (material, piece-square tables, bishop pair and pawn structure,
middlegame and endgame), so every position becomes one sparse row of
coefficients, `features(board)`, with

    evaluation for White (without tempo) == row . weights   (up to rounding).

`Layout` (the module-wide `LAYOUT`) numbers the tunable weights; the fixed
ones (king material, the pawn table's ranks 1 and 8, PHASE_WEIGHT, TEMPO) get
no slot.  `feature_matrix` stacks the rows of many positions into a sparse
matrix (numpy and scipy, imported only there).

Used by training/tuner.py (docs/tuning.md).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import chess
from tqdm import tqdm

from eval import weights as W
from eval.evaluate import evaluate
from eval.pawns import king_proximity_counts, structure_counts

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import scipy.sparse

PIECE_NAMES = {chess.PAWN: "PAWN", chess.KNIGHT: "KNIGHT", chess.BISHOP: "BISHOP",
               chess.ROOK: "ROOK", chess.QUEEN: "QUEEN", chess.KING: "KING"}
STAGES = ("MG", "EG")
#: The pawn-structure weights of eval/weights.py, as a weights module names them.
PAWN_STRUCTURE_NAMES = ("PASSED_MG", "PASSED_EG", "ISOLATED", "DOUBLED", "CONNECTED", "KING_PROXIMITY")


# --- parameters --------------------------------------------------------------

class Layout:
    """Where each tunable weight sits in the parameter vector, and its name.

    Order: material mg (P N B R Q), material eg, bishop pair mg, eg, then the
    piece-square tables, mg for all pieces then eg, each in diagram order
    (a8..h8, ..., a1..h1), then pawn structure: passed pawns by rank (2nd to
    7th) mg then eg, isolated, doubled and connected (mg, eg each), and the
    two endgame king-proximity weights.  Fixed weights (king material, pawn
    ranks 1 and 8) have no slot.
    """

    def __init__(self) -> None:
        self.names: list[str] = []
        self.material = [[-1] * 7 for _ in STAGES]  # [stage][piece_type]
        for stage, suffix in enumerate(STAGES):
            for piece_type in chess.PIECE_TYPES:
                if piece_type != chess.KING:
                    self.material[stage][piece_type] = self._add(f"MATERIAL_{suffix}[{PIECE_NAMES[piece_type]}]")
        self.pair = [self._add(f"BISHOP_PAIR_{suffix}") for suffix in STAGES]
        self.pst = [[[-1] * 64 for _ in range(7)] for _ in STAGES]  # [stage][piece_type][diagram index]
        for stage, suffix in enumerate(STAGES):
            for piece_type in chess.PIECE_TYPES:
                for index in range(64):
                    if piece_type == chess.PAWN and index // 8 in (0, 7):
                        continue
                    square = chess.square_name(index ^ 56)
                    self.pst[stage][piece_type][index] = self._add(f"{PIECE_NAMES[piece_type]}_{suffix}[{square}]")

        # Pawn structure (eval/pawns.py): (slot, weights-module name, index) per weight.
        self.pawn_terms: list[tuple[int, str, int]] = []
        self.passed = [[-1] * 8 for _ in STAGES]  # [stage][relative rank]
        for stage, suffix in enumerate(STAGES):
            for rank in range(1, 7):
                self.passed[stage][rank] = self._add_pawn_term(f"PASSED_{suffix}", rank, stage)
        self.pawn_pair = {name: [self._add_pawn_term(name, stage, stage) for stage in (0, 1)]
                          for name in ("ISOLATED", "DOUBLED", "CONNECTED")}
        # Both king-proximity weights are endgame weights.
        self.king_proximity = [self._add_pawn_term("KING_PROXIMITY", index, 1) for index in (0, 1)]

    def _add_pawn_term(self, name: str, index: int, stage: int) -> int:
        slot = self._add(f"{name}[{index}]")
        self.pawn_terms.append((slot, name, index))
        return slot

    def _add(self, name: str) -> int:
        self.names.append(name)
        return len(self.names) - 1

    def __len__(self) -> int:
        return len(self.names)

    def vector(self, module: object = W) -> list[float]:
        """The weights of a module laid out like eval/weights.py, as a vector."""
        vector = [0.0] * len(self)
        for stage, suffix in enumerate(STAGES):
            material = getattr(module, f"MATERIAL_{suffix}")
            for piece_type in chess.PIECE_TYPES:
                if self.material[stage][piece_type] >= 0:
                    vector[self.material[stage][piece_type]] = material[piece_type]
                table = getattr(module, f"{PIECE_NAMES[piece_type]}_{suffix}")
                for index, slot in enumerate(self.pst[stage][piece_type]):
                    if slot >= 0:
                        vector[slot] = table[index]
            vector[self.pair[stage]] = getattr(module, f"BISHOP_PAIR_{suffix}")
        for slot, name, index in self.pawn_terms:
            vector[slot] = getattr(module, name)[index]
        return vector

    def tables(self, vector: Sequence[float]) -> dict[str, object]:
        """Integer MATERIAL_*, BISHOP_PAIR_* and <PIECE>_* tables from a vector."""
        out: dict[str, object] = {}
        for stage, suffix in enumerate(STAGES):
            out[f"MATERIAL_{suffix}"] = [
                int(round(vector[slot])) if slot >= 0 else 0 for slot in self.material[stage]
            ]
            out[f"BISHOP_PAIR_{suffix}"] = int(round(vector[self.pair[stage]]))
            for piece_type in chess.PIECE_TYPES:
                out[f"{PIECE_NAMES[piece_type]}_{suffix}"] = [
                    int(round(vector[slot])) if slot >= 0 else 0 for slot in self.pst[stage][piece_type]
                ]
            out[f"PASSED_{suffix}"] = [int(round(vector[slot])) if slot >= 0 else 0 for slot in self.passed[stage]]
        for name, slots in self.pawn_pair.items():
            out[name] = tuple(int(round(vector[slot])) for slot in slots)
        out["KING_PROXIMITY"] = tuple(int(round(vector[slot])) for slot in self.king_proximity)
        return out


LAYOUT = Layout()


# --- features ----------------------------------------------------------------

def phase_of(board: chess.Board) -> int:
    """The taper phase, capped at PHASE_TOTAL as `taper` does."""
    phase = sum(W.PHASE_WEIGHT[piece.piece_type] for piece in board.piece_map().values())
    return min(phase, W.PHASE_TOTAL)


def sparse_terms(board: chess.Board) -> tuple[list[int], list[int], list[int], int]:
    """(slots, signs, stages, phase): the evaluation as a signed count of weights.

    White pieces count +1 at the diagram index of their square (square ^ 56),
    Black pieces -1 at the index of the mirrored square (the square itself),
    exactly as `eval.weights._signed_tables` builds the engine's tables.  A
    slot may repeat (material); the coefficients add up.
    """
    slots: list[int] = []
    signs: list[int] = []
    stages: list[int] = []
    for square, piece in board.piece_map().items():
        sign = 1 if piece.color == chess.WHITE else -1
        index = square ^ 56 if piece.color == chess.WHITE else square
        for stage in (0, 1):
            for slot in (LAYOUT.material[stage][piece.piece_type], LAYOUT.pst[stage][piece.piece_type][index]):
                if slot >= 0:
                    slots.append(slot)
                    signs.append(sign)
                    stages.append(stage)
    for color, sign in ((chess.WHITE, 1), (chess.BLACK, -1)):
        if (board.bishops & board.occupied_co[color]).bit_count() >= 2:
            for stage in (0, 1):
                slots.append(LAYOUT.pair[stage])
                signs.append(sign)
                stages.append(stage)
    for slot, count, stage in pawn_structure_terms(board):
        if count:
            slots.append(slot)
            signs.append(count)
            stages.append(stage)
    return slots, signs, stages, phase_of(board)


def pawn_structure_terms(board: chess.Board) -> list[tuple[int, int, int]]:
    """(slot, White-minus-Black count, stage) of every pawn-structure weight."""
    white = board.occupied_co[chess.WHITE]
    counts = structure_counts(board.pawns & white, board.pawns & ~white)
    far, near = king_proximity_counts(board, counts.white_passed, counts.black_passed)
    terms = [(LAYOUT.passed[stage][rank], counts.passed[rank], stage) for stage in (0, 1) for rank in range(1, 7)]
    for name, count in (("ISOLATED", counts.isolated), ("DOUBLED", counts.doubled), ("CONNECTED", counts.connected)):
        terms.extend((LAYOUT.pawn_pair[name][stage], count, stage) for stage in (0, 1))
    # king_proximity = KING_PROXIMITY[0] * far - KING_PROXIMITY[1] * near, endgame only.
    terms.append((LAYOUT.king_proximity[0], far, 1))
    terms.append((LAYOUT.king_proximity[1], -near, 1))
    return terms


def features(board: chess.Board) -> dict[int, float]:
    """Coefficient of every weight in the White-view tapered evaluation (no tempo)."""
    slots, signs, stages, phase = sparse_terms(board)
    scale = (phase / W.PHASE_TOTAL, (W.PHASE_TOTAL - phase) / W.PHASE_TOTAL)
    row: dict[int, float] = {}
    for slot, sign, stage in zip(slots, signs, stages):
        row[slot] = row.get(slot, 0.0) + sign * scale[stage]
    return row


def tempo_offset(board: chess.Board) -> int:
    """The (untuned) tempo bonus in White's view: the engine adds it for the mover."""
    return W.TEMPO if board.turn == chess.WHITE else -W.TEMPO


def untuned_offset(board: chess.Board) -> float:
    """White-view terms the tuner holds fixed: only the tempo (every other term has a slot)."""
    return tempo_offset(board)


def white_view(board: chess.Board) -> int:
    """`evaluate()` from White's point of view, tempo included."""
    score = evaluate(board)
    return score if board.turn == chess.WHITE else -score


def feature_matrix(boards: Sequence[chess.Board], progress: bool = False) -> tuple["scipy.sparse.csr_matrix", "np.ndarray"]:
    """Sparse (positions x weights) coefficient matrix and the untuned offsets (tempo)."""
    import numpy as np
    import scipy.sparse

    rows: list[int] = []
    slots: list[int] = []
    signs: list[int] = []
    stages: list[int] = []
    phases = np.empty(len(boards))
    offsets = np.empty(len(boards))
    for number, board in enumerate(tqdm(boards, desc="features", unit="pos", disable=not progress)):
        s, g, t, phase = sparse_terms(board)
        rows.extend([number] * len(s))
        slots.extend(s)
        signs.extend(g)
        stages.extend(t)
        phases[number] = phase
        offsets[number] = untuned_offset(board)
    row_array = np.asarray(rows, dtype=np.int64)
    mg_scale = phases / W.PHASE_TOTAL
    scale = np.where(np.asarray(stages) == 0, mg_scale[row_array], 1.0 - mg_scale[row_array])
    values = np.asarray(signs, dtype=float) * scale
    matrix = scipy.sparse.csr_matrix((values, (row_array, np.asarray(slots))), shape=(len(boards), len(LAYOUT)))
    return matrix, offsets
