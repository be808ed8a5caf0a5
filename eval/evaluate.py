"""The classical evaluation: tapered material and piece-square tables, bishop pair, pawn terms.

Scores are computed from White's point of view and returned relative to the
side to move (negamax convention).  The search keeps the middlegame/endgame
sums and the phase up to date move by move (see `search.position`); this module
is the from-scratch reference those incremental sums are tested against, and
what the UCI `eval` command prints.
"""
from __future__ import annotations

from dataclasses import dataclass

import chess

from eval.pawns import king_proximity, structure
from eval.weights import (
    BISHOP_PAIR_EG,
    BISHOP_PAIR_MG,
    EG_TABLE,
    MATERIAL_EG,
    MATERIAL_MG,
    MG_TABLE,
    PHASE_TOTAL,
    PHASE_WEIGHT,
    TEMPO,
)


@dataclass(frozen=True)
class PackedScore:
    """The incremental part of the evaluation: White-minus-Black sums."""

    mg: int
    eg: int
    phase: int


def packed_score(board: chess.Board) -> PackedScore:
    """Sum material + placement for both colours and count the game phase."""
    mg = eg = phase = 0
    for color in chess.COLORS:
        occupied = board.occupied_co[color]
        for piece_type in chess.PIECE_TYPES:
            mg_row = MG_TABLE[color][piece_type]
            eg_row = EG_TABLE[color][piece_type]
            for square in chess.scan_forward(board.pieces_mask(piece_type, color) & occupied):
                mg += mg_row[square]
                eg += eg_row[square]
                phase += PHASE_WEIGHT[piece_type]
    return PackedScore(mg, eg, phase)


def taper(mg: int, eg: int, phase: int) -> int:
    """Blend middlegame and endgame scores by phase (24 = all pieces on)."""
    phase = min(phase, PHASE_TOTAL)
    blended = mg * phase + eg * (PHASE_TOTAL - phase)
    # Round toward zero, not down, so that mirrored positions score exactly
    # opposite (floor division would favour Black by a centipawn).
    return blended // PHASE_TOTAL if blended >= 0 else -(-blended // PHASE_TOTAL)


def bishop_pair(board: chess.Board) -> tuple[int, int]:
    """(mg, eg) bishop-pair bonus, White minus Black.

    Called at every evaluation, hence the flat arithmetic instead of a loop
    over the colours.
    """
    bishops = board.bishops
    white = board.occupied_co[chess.WHITE]
    pairs = ((bishops & white).bit_count() >= 2) - ((bishops & ~white).bit_count() >= 2)
    return pairs * BISHOP_PAIR_MG, pairs * BISHOP_PAIR_EG


def finish(board: chess.Board, mg: int, eg: int, phase: int) -> int:
    """Add the non-incremental terms to packed sums; side-to-move relative.

    Shared by `evaluate` and the search's incremental evaluation so that the
    two can never drift apart in anything but the packed sums themselves.
    """
    pair_mg, pair_eg = bishop_pair(board)
    pawns = board.pawns
    white = board.occupied_co[chess.WHITE]
    pawn_mg, pawn_eg, white_passed, black_passed = structure(pawns & white, pawns & ~white)
    eg += pawn_eg
    if white_passed or black_passed:
        eg += king_proximity(board, white_passed, black_passed)
    score = taper(mg + pair_mg + pawn_mg, eg + pair_eg, phase)
    return (score if board.turn == chess.WHITE else -score) + TEMPO


def evaluate(board: chess.Board) -> int:
    """Static evaluation in centipawns for the side to move."""
    packed = packed_score(board)
    return finish(board, packed.mg, packed.eg, packed.phase)


def evaluate_terms(board: chess.Board) -> dict[str, tuple[int, int]]:
    """Each term as (middlegame, endgame), White's view, for the `eval` command."""
    material_mg = material_eg = 0
    for piece_type in chess.PIECE_TYPES:
        diff = len(board.pieces(piece_type, chess.WHITE)) - len(board.pieces(piece_type, chess.BLACK))
        material_mg += diff * MATERIAL_MG[piece_type]
        material_eg += diff * MATERIAL_EG[piece_type]
    packed = packed_score(board)
    return {
        "material": (material_mg, material_eg),
        "placement": (packed.mg - material_mg, packed.eg - material_eg),
        "bishop pair": bishop_pair(board),
        "pawns": pawn_terms(board),
    }


def pawn_terms(board: chess.Board) -> tuple[int, int]:
    """(mg, eg) of pawn structure and king proximity to passed pawns, White's view."""
    white = board.occupied_co[chess.WHITE]
    mg, eg, white_passed, black_passed = structure(board.pawns & white, board.pawns & ~white)
    return mg, eg + king_proximity(board, white_passed, black_passed)


def describe(board: chess.Board) -> str:
    """A human-readable table of the evaluation, like Stockfish's `eval`."""
    packed = packed_score(board)
    phase = min(packed.phase, PHASE_TOTAL)
    lines = ["     Term    |    MG    EG  (White's view, cp)", "-------------+------------------"]
    for name, (mg, eg) in evaluate_terms(board).items():
        lines.append(f"{name:>12} | {mg:5d} {eg:5d}")
    lines.append(f"{'phase':>12} | {phase:5d}/{PHASE_TOTAL}")
    score = evaluate(board)
    white_view = score - TEMPO if board.turn == chess.WHITE else -(score - TEMPO)
    lines.append(f"Tapered evaluation: {white_view / 100:+.2f} (White side)")
    lines.append(f"Final evaluation:   {score / 100:+.2f} (side to move, incl. tempo {TEMPO})")
    return "\n".join(lines)
