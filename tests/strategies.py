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


def _forward(board: chess.Board, move: chess.Move) -> int:
    """How far up the board `move` takes a piece, from the mover's side."""
    rank = chess.square_rank(move.to_square)
    return rank if board.turn == chess.WHITE else 7 - rank


def _opens_en_passant(board: chess.Board, move: chess.Move) -> bool:
    """A pawn's double step that lands beside an enemy pawn."""
    if board.piece_type_at(move.from_square) != chess.PAWN or abs(move.to_square - move.from_square) != 16:
        return False
    enemy = chess.Piece(chess.PAWN, not board.turn)
    return any(board.piece_at(square) == enemy for square in (move.to_square - 1, move.to_square + 1)
               if 0 <= square < 64 and chess.square_distance(square, move.to_square) == 1)


def special_move(board: chess.Board, choice: int) -> chess.Move:
    """A legal move picked by `choice`, steered towards castling, en passant and promotions.

    Random games rarely castle, capture en passant or promote in a few dozen
    plies, yet these are the moves incremental updates most often get wrong.
    So: `choice` % 4 == 3 plays a move at random; otherwise an en passant
    capture is taken whenever there is one, and 0 castles (or clears the back
    rank for it), 1 promotes (or pushes the most advanced pawn), 2 makes a
    double step beside an enemy pawn, each falling back to a random move.
    The board must have a legal move.
    """
    moves = list(board.legal_moves)
    kind, pick = choice % 4, choice // 4

    def one_of(candidates: list[chess.Move]) -> chess.Move:
        return candidates[pick % len(candidates)]

    if kind != 3:
        en_passant = [move for move in moves if board.is_en_passant(move)]
        if en_passant:
            return one_of(en_passant)
    if kind == 0:
        castles = [move for move in moves if board.is_castling(move)]
        if castles:
            return one_of(castles)
        back_rank = 0 if board.turn == chess.WHITE else 7
        developing = [move for move in moves if chess.square_rank(move.from_square) == back_rank
                      and board.piece_type_at(move.from_square) in (chess.KNIGHT, chess.BISHOP, chess.QUEEN)]
        if developing:
            return one_of(developing)
    elif kind == 1:
        promotions = [move for move in moves if move.promotion]
        if promotions:
            return one_of(promotions)
        pawn_moves = [move for move in moves if board.piece_type_at(move.from_square) == chess.PAWN]
        if pawn_moves:
            return max(pawn_moves, key=lambda move: (_forward(board, move), move.uci()))
    elif kind == 2:
        doubles = [move for move in moves if _opens_en_passant(board, move)]
        if doubles:
            return one_of(doubles)
    return moves[choice % len(moves)]
