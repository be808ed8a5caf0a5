"""Hypothesis strategies for chess positions."""
from __future__ import annotations

import chess
from hypothesis import strategies as st


@st.composite
def boards(draw: st.DrawFn, max_plies: int = 60, keep_history: bool = False) -> chess.Board:
    """A position reached by random legal moves from the start (never game over)."""
    board = chess.Board()
    plies = draw(st.integers(min_value=0, max_value=max_plies))
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(moves[draw(st.integers(min_value=0, max_value=len(moves) - 1))])
    if board.is_game_over():
        board.pop()
    return board if keep_history else chess.Board(board.fen())
