"""Slow but obviously correct reference searches, to check the fast ones against."""
from __future__ import annotations

from typing import Callable

import chess

from eval import evaluate
from search.types import MATE


def minimax(board: chess.Board, depth: int, ply: int = 0, evaluate: Callable[[chess.Board], int] = evaluate) -> int:
    """Plain negamax minimax with the engine's rules for leaves and terminals.

    Same conventions as the engine's exact mode: draws (fifty-move rule,
    repetition) scored 0 below the root, static evaluation at the horizon,
    mate scored as MATE - plies.  `evaluate` scores the leaves (classical by default).
    """
    if ply > 0:
        if board.halfmove_clock >= 100 and not board.is_checkmate():
            return 0
        if board.is_repetition(2):
            return 0
    if depth == 0:
        return evaluate(board)
    moves = list(board.legal_moves)
    if not moves:
        return -MATE + ply if board.is_check() else 0
    best = -MATE - 1
    for move in moves:
        board.push(move)
        best = max(best, -minimax(board, depth - 1, ply + 1, evaluate))
        board.pop()
    return best


# --- the classical evaluation, rule by rule ---------------------------------------------------
#
# Written from the rules (README "Evaluation", eval/weights.py's comments), square by
# square with python-chess, using none of eval.evaluate's or eval.pawns's helpers, only
# the weights themselves: a wrong mask or sign in the fast code cannot pass through here.


def _diagram_value(table: list[int], color: chess.Color, square: chess.Square) -> int:
    """A piece-square table written as a diagram seen from White (index 0 = a8, 63 = h1)."""
    file, rank = chess.square_file(square), chess.square_rank(square)
    row = 7 - rank if color == chess.WHITE else rank  # Black reads the diagram mirrored
    return table[row * 8 + file]


def _pawn_structure(board: chess.Board, color: chess.Color) -> tuple[int, int]:
    """(mg, eg) of one side's pawn structure and the kings' distances to its passed pawns."""
    from eval import weights

    ours = {(chess.square_file(sq), chess.square_rank(sq)) for sq in board.pieces(chess.PAWN, color)}
    theirs = {(chess.square_file(sq), chess.square_rank(sq)) for sq in board.pieces(chess.PAWN, not color)}
    forward = 1 if color == chess.WHITE else -1
    own_king, enemy_king = board.king(color), board.king(not color)
    mg = eg = 0
    for file, rank in ours:
        def ahead(f: int, pawns: set[tuple[int, int]]) -> bool:
            return any(pf == f and (pr - rank) * forward > 0 for pf, pr in pawns)

        if not any(pf in (file - 1, file + 1) for pf, _ in ours):
            mg, eg = mg + weights.ISOLATED[0], eg + weights.ISOLATED[1]
        if ahead(file, ours):
            mg, eg = mg + weights.DOUBLED[0], eg + weights.DOUBLED[1]
        if {(file - 1, rank - forward), (file + 1, rank - forward), (file - 1, rank), (file + 1, rank)} & ours:
            mg, eg = mg + weights.CONNECTED[0], eg + weights.CONNECTED[1]
        passed = not ahead(file, ours) and not any(ahead(f, theirs) for f in (file - 1, file, file + 1))
        if passed:
            relative = rank if color == chess.WHITE else 7 - rank
            mg, eg = mg + weights.PASSED_MG[relative], eg + weights.PASSED_EG[relative]
            if relative >= 3:
                front = (file, rank + forward)

                def distance(king: chess.Square) -> int:
                    return max(abs(chess.square_file(king) - front[0]), abs(chess.square_rank(king) - front[1]))

                weight = relative - 2
                eg += weight * (weights.KING_PROXIMITY[0] * distance(enemy_king)
                                - weights.KING_PROXIMITY[1] * distance(own_king))
    return mg, eg


def reference_terms(board: chess.Board) -> dict[str, tuple[int, int]]:
    """The classical evaluation's terms, (middlegame, endgame), White's view."""
    from eval import weights

    material = [0, 0]
    placement = [0, 0]
    for square, piece in board.piece_map().items():
        sign = 1 if piece.color == chess.WHITE else -1
        material[0] += sign * weights.MATERIAL_MG[piece.piece_type]
        material[1] += sign * weights.MATERIAL_EG[piece.piece_type]
        placement[0] += sign * _diagram_value(weights.PST_MG[piece.piece_type], piece.color, square)
        placement[1] += sign * _diagram_value(weights.PST_EG[piece.piece_type], piece.color, square)
    pair = (len(board.pieces(chess.BISHOP, chess.WHITE)) >= 2) - (len(board.pieces(chess.BISHOP, chess.BLACK)) >= 2)
    white, black = _pawn_structure(board, chess.WHITE), _pawn_structure(board, chess.BLACK)
    return {
        "material": (material[0], material[1]),
        "placement": (placement[0], placement[1]),
        "bishop pair": (pair * weights.BISHOP_PAIR_MG, pair * weights.BISHOP_PAIR_EG),
        "pawns": (white[0] - black[0], white[1] - black[1]),
    }


def reference_phase(board: chess.Board) -> int:
    """Game phase: 24 with every piece on the board (more is counted as 24)."""
    from eval import weights

    total = sum(weights.PHASE_WEIGHT[piece.piece_type] for piece in board.piece_map().values())
    return min(total, weights.PHASE_TOTAL)


def reference_tapered(terms: dict[str, tuple[int, int]], phase: int) -> int:
    """The terms blended by phase, White's view, rounded toward zero."""
    from fractions import Fraction

    from eval import weights

    mg = sum(term[0] for term in terms.values())
    eg = sum(term[1] for term in terms.values())
    return int(Fraction(mg * phase + eg * (weights.PHASE_TOTAL - phase), weights.PHASE_TOTAL))


def reference_evaluate(board: chess.Board) -> int:
    """The classical evaluation for the side to move, tempo included."""
    from eval import weights

    white_view = reference_tapered(reference_terms(board), reference_phase(board))
    return (white_view if board.turn == chess.WHITE else -white_view) + weights.TEMPO
