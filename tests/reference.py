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
