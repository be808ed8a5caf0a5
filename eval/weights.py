"""Evaluation weights: material, piece-square tables, bishop pair, pawn terms, tempo.

Tables are written as a player sees the board from White's side (rank 8 on top,
a-file on the left), so they can be read and edited like a diagram.  The
evaluation flips them for Black.  Values are centipawns; they are hand-set
starting points.  `training/tuner.py` fits them to game results (Texel's method)
and writes a module in the same layout, to be copied here if a match says it
plays better (two tuned sets did not, docs/tuning.md).
"""
from __future__ import annotations

import chess

#: The evaluation's piece values (middlegame, endgame), indexed by python-chess
#: piece type; fitted with the tables, so they differ on purpose from the
#: exchange values the search counts captures with (`search.types.PIECE_VALUE`).
MATERIAL_MG = [0, 90, 320, 335, 470, 960, 0]
MATERIAL_EG = [0, 115, 290, 310, 520, 960, 0]

#: Game phase weight of each piece type; a full board is PHASE_TOTAL.
PHASE_WEIGHT = [0, 0, 1, 1, 2, 4, 0]
PHASE_TOTAL = 24

BISHOP_PAIR_MG = 30
BISHOP_PAIR_EG = 50
#: Bonus for the side to move: the initiative is worth something and it damps
#: the odd/even oscillation of scores between iterations.
TEMPO = 10

# Pawn structure (eval/pawns.py), (mg, eg) in centipawns.  Passed pawns are
# indexed by the pawn's rank from its own side (0..7).
PASSED_MG = [0, 5, 10, 15, 30, 50, 80, 0]
PASSED_EG = [0, 10, 15, 30, 55, 90, 140, 0]
ISOLATED = (-10, -15)
DOUBLED = (-10, -25)
#: A pawn defended by a pawn, or side by side with one (a phalanx).
CONNECTED = (8, 6)
#: Endgame, per square of distance of (the enemy king, our own king) from the
#: square in front of a passed pawn, scaled by its rank: the first is a bonus,
#: the second a penalty.
KING_PROXIMITY = (5, 2)

# fmt: off
PAWN_MG = [
      0,   0,   0,   0,   0,   0,   0,   0,
     60,  70,  60,  70,  70,  60,  70,  60,
     15,  20,  30,  40,  40,  30,  20,  15,
      0,   5,  10,  25,  25,  10,   5,   0,
     -5,   0,   5,  20,  20,   0,   0,  -5,
     -5,   0,  -5,   0,   0,  -5,   5,  -5,
     -5,   0,   0, -20, -20,  10,  10,  -5,
      0,   0,   0,   0,   0,   0,   0,   0,
]
PAWN_EG = [
      0,   0,   0,   0,   0,   0,   0,   0,
    130, 130, 120, 110, 110, 120, 130, 130,
     80,  80,  70,  60,  60,  70,  80,  80,
     40,  35,  30,  25,  25,  30,  35,  40,
     15,  15,  10,   5,   5,  10,  15,  15,
      5,   5,   0,   0,   0,   0,   5,   5,
      0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,
]
KNIGHT_MG = [
    -60, -30, -20, -20, -20, -20, -30, -60,
    -30, -15,   0,   5,   5,   0, -15, -30,
    -20,   5,  15,  20,  20,  15,   5, -20,
    -15,   5,  20,  25,  25,  20,   5, -15,
    -15,   0,  15,  20,  20,  15,   0, -15,
    -20,   5,  10,  15,  15,  10,   5, -20,
    -30, -20,   0,   5,   5,   0, -20, -30,
    -50, -25, -25, -20, -20, -25, -25, -50,
]
KNIGHT_EG = [
    -50, -35, -25, -20, -20, -25, -35, -50,
    -35, -20,  -5,   0,   0,  -5, -20, -35,
    -25,  -5,  10,  15,  15,  10,  -5, -25,
    -20,   0,  15,  20,  20,  15,   0, -20,
    -20,   0,  15,  20,  20,  15,   0, -20,
    -25,  -5,   5,  10,  10,   5,  -5, -25,
    -35, -20,  -5,   0,   0,  -5, -20, -35,
    -50, -35, -25, -20, -20, -25, -35, -50,
]
BISHOP_MG = [
    -20, -10, -10, -10, -10, -10, -10, -20,
    -10,   0,   0,   0,   0,   0,   0, -10,
    -10,   0,   5,  10,  10,   5,   0, -10,
    -10,   5,   5,  10,  10,   5,   5, -10,
    -10,   0,  10,  10,  10,  10,   0, -10,
    -10,  10,  10,  10,  10,  10,  10, -10,
    -10,  10,   0,   0,   0,   0,  10, -10,
    -20, -10, -15, -10, -10, -15, -10, -20,
]
BISHOP_EG = [
    -15, -10,  -8,  -5,  -5,  -8, -10, -15,
    -10,  -5,   0,   0,   0,   0,  -5, -10,
     -8,   0,   5,   5,   5,   5,   0,  -8,
     -5,   0,   5,  10,  10,   5,   0,  -5,
     -5,   0,   5,  10,  10,   5,   0,  -5,
     -8,   0,   5,   5,   5,   5,   0,  -8,
    -10,  -5,   0,   0,   0,   0,  -5, -10,
    -15, -10,  -8,  -5,  -5,  -8, -10, -15,
]
ROOK_MG = [
      5,  10,  10,  15,  15,  10,  10,   5,
     20,  25,  25,  25,  25,  25,  25,  20,
     -5,   0,   5,   5,   5,   5,   0,  -5,
    -10,   0,   0,   5,   5,   0,   0, -10,
    -10,   0,   0,   5,   5,   0,   0, -10,
    -10,   0,   0,   5,   5,   0,   0, -10,
    -15,  -5,   0,   5,   5,   0,  -5, -15,
     -5,  -5,   5,  15,  15,  10,  -5,  -5,
]
ROOK_EG = [
     10,  10,  10,  10,  10,  10,  10,  10,
     15,  15,  15,  15,  15,  15,  15,  15,
      5,   5,   5,   5,   5,   5,   5,   5,
      0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,
     -5,  -5,  -5,  -5,  -5,  -5,  -5,  -5,
     -5,  -5,  -5,  -5,  -5,  -5,  -5,  -5,
    -10,  -5,   0,   0,   0,   0,  -5, -10,
]
QUEEN_MG = [
    -20, -10, -10,  -5,  -5, -10, -10, -20,
    -10,  -5,   0,   0,   0,   0,  -5, -10,
    -10,   0,   5,   5,   5,   5,   0, -10,
     -5,   0,   5,   5,   5,   5,   0,  -5,
     -5,   0,   5,   5,   5,   5,   0,  -5,
    -10,   5,   5,   5,   5,   5,   0, -10,
    -10,   0,   5,   0,   0,   0,   0, -10,
    -20, -10, -10,   0,  -5, -10, -10, -20,
]
QUEEN_EG = [
    -20, -10,  -5,   0,   0,  -5, -10, -20,
    -10,   0,   5,  10,  10,   5,   0, -10,
     -5,   5,  15,  20,  20,  15,   5,  -5,
      0,  10,  20,  25,  25,  20,  10,   0,
      0,  10,  20,  25,  25,  20,  10,   0,
     -5,   5,  15,  20,  20,  15,   5,  -5,
    -10,   0,   5,  10,  10,   5,   0, -10,
    -20, -10,  -5,   0,   0,  -5, -10, -20,
]
KING_MG = [
    -40, -50, -50, -60, -60, -50, -50, -40,
    -40, -50, -50, -60, -60, -50, -50, -40,
    -40, -50, -50, -60, -60, -50, -50, -40,
    -40, -50, -50, -60, -60, -50, -50, -40,
    -30, -40, -40, -50, -50, -40, -40, -30,
    -20, -30, -30, -40, -40, -30, -30, -20,
     10,  10, -10, -20, -20, -10,  15,  15,
     20,  35,  15, -10,   0,  -5,  40,  25,
]
KING_EG = [
    -50, -35, -25, -20, -20, -25, -35, -50,
    -30, -15,  -5,   0,   0,  -5, -15, -30,
    -25,  -5,  15,  20,  20,  15,  -5, -25,
    -20,  -5,  20,  30,  30,  20,  -5, -20,
    -20,  -5,  20,  30,  30,  20,  -5, -20,
    -25,  -5,  10,  20,  20,  10,  -5, -25,
    -30, -20,   0,   5,   5,   0, -20, -30,
    -50, -35, -25, -20, -20, -25, -35, -50,
]
# fmt: on

#: Piece-square tables by piece type, as diagrams (index 0 = a8, 63 = h1).
PST_MG = [[], PAWN_MG, KNIGHT_MG, BISHOP_MG, ROOK_MG, QUEEN_MG, KING_MG]
PST_EG = [[], PAWN_EG, KNIGHT_EG, BISHOP_EG, ROOK_EG, QUEEN_EG, KING_EG]


def _signed_tables(pst: list[list[int]], material: list[int]) -> list[list[list[int]]]:
    """Material plus placement per [color][piece_type][square], White positive.

    Folding material into the table and the sign into the colour makes an
    incremental update one lookup per square a move touches.
    """
    tables: list[list[list[int]]] = [[[] for _ in range(7)] for _ in chess.COLORS]
    for piece_type in chess.PIECE_TYPES:
        diagram = pst[piece_type]
        value = material[piece_type]
        # Diagram index of a White piece on `square` is square ^ 56 (rank flip);
        # a Black piece on `square` reads the White diagram at the mirrored
        # square, which is the diagram index `square` itself.
        tables[chess.WHITE][piece_type] = [value + diagram[sq ^ 56] for sq in chess.SQUARES]
        tables[chess.BLACK][piece_type] = [-(value + diagram[sq]) for sq in chess.SQUARES]
    return tables


#: Signed tables used by both the full and the incremental evaluation.
MG_TABLE = _signed_tables(PST_MG, MATERIAL_MG)
EG_TABLE = _signed_tables(PST_EG, MATERIAL_EG)
