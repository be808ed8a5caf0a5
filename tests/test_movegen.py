"""The inlined generator (`search.movegen`) gives python-chess's legal moves, in python-chess's order.

The order matters as much as the set: the search breaks ordering ties by
generation order, so a different order would change its tree.  Also the
quiescence shortcut beside it: declining to generate captures that delta
pruning would all skip changes neither the score nor the tree.
"""
from __future__ import annotations

import random

import chess
import pytest

import search.alphabeta
from search.alphabeta import AlphaBeta
from search.features import Features
from search.movegen import evasions, legal_captures, legal_moves, pinned
from search.position import Position
from search.tt import TranspositionTable
from search.types import INFINITY


def random_positions(seed: int, games: int, chess960: bool = False, in_check: bool = False) -> list[chess.Board]:
    """Positions from random games: not in check, captures and pawn moves preferred (to reach promotions and
    pins); or, `in_check`, in check, checks preferred (double checks, en passant and promotions among them)."""
    rng = random.Random(seed)
    positions = []
    for _ in range(games):
        board = chess.Board(chess960=chess960)
        if chess960:
            board.set_chess960_pos(rng.randrange(960))
        for _ in range(rng.randrange(10, 160 if in_check else 140)):
            moves = list(board.legal_moves)
            if not moves:
                break
            if in_check:
                preferred, share = [m for m in moves if board.gives_check(m)], 0.6
            else:
                preferred = [m for m in moves if board.is_capture(m) or board.piece_type_at(m.from_square) == chess.PAWN]
                share = 0.5
            board.push(rng.choice(preferred if preferred and rng.random() < share else moves))
            if board.is_check() == in_check:
                positions.append(board.copy(stack=False))
    return positions


def masks(board: chess.Board) -> list[tuple[int, int]]:
    """The (from, to) masks the search asks with, and a few others."""
    promoting = board.pawns & board.occupied_co[board.turn] & (chess.BB_RANK_7 | chess.BB_RANK_2)
    return [
        (chess.BB_ALL, chess.BB_ALL),
        (chess.BB_ALL, board.occupied_co[not board.turn]),
        (promoting, ~board.occupied),
        (~promoting, ~board.occupied | board.castling_rights & board.occupied_co[board.turn]),
        (board.knights | board.bishops, chess.BB_ALL),
        (chess.BB_ALL, chess.BB_CENTER),
    ]


@pytest.mark.parametrize("chess960", [False, True])
def test_same_moves_in_the_same_order_as_python_chess(chess960: bool) -> None:
    positions = random_positions(3 + chess960, 60, chess960)
    assert len(positions) > 2000
    for board in positions:
        for from_mask, to_mask in masks(board):
            assert legal_moves(board, from_mask, to_mask) == list(board.generate_legal_moves(from_mask, to_mask)), board.fen()
        assert legal_captures(board) == list(board.generate_legal_captures()), board.fen()
        king = (board.kings & board.occupied_co[board.turn]).bit_length() - 1
        assert pinned(board, king) == board._slider_blockers(king), board.fen()


@pytest.mark.parametrize("fen", [
    "4k3/8/8/8/1b6/8/3P4/4K3 w - - 0 1",  # pinned pawn: no push off the diagonal
    "4k3/8/8/8/8/8/r2PK3/8 w - - 0 1",  # pinned on a rank: no move at all
    "4k3/8/8/8/8/2b5/3P4/4K3 w - - 0 1",  # a pinned pawn takes its pinner
    "4k3/8/8/8/4r3/8/4B3/4K3 w - - 0 1",  # pinned bishop on a file: no move
    "4k3/8/8/8/4r3/8/4R3/4K3 w - - 0 1",  # pinned rook slides along the file and takes
    "3rk3/2P5/8/8/8/8/8/4K3 w - - 0 1",  # promotions, plain and by capture
    "4k3/8/8/KpP4r/8/8/8/8 w - b6 0 2",  # en passant that would expose the king on the rank
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",  # en passant allowed
    "r3k2r/8/8/8/8/5b2/8/R3K2R w KQkq - 0 1",  # castling through an attacked square
    "8/8/8/8/8/8/8/K6k w - - 0 1",  # kings only
])
def test_tricky_positions(fen: str) -> None:
    board = chess.Board(fen)
    assert not board.is_check()
    for from_mask, to_mask in masks(board):
        assert legal_moves(board, from_mask, to_mask) == list(board.generate_legal_moves(from_mask, to_mask))
    assert legal_captures(board) == list(board.generate_legal_captures())


def test_quiescence_shortcut_changes_neither_score_nor_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every capture below delta pruning's bar, quiescence returns without generating; without the shortcut it loops to the same end."""
    positions = random_positions(11, 12)[::10]
    assert len(positions) > 50
    windows = [(-INFINITY, INFINITY), (-50, 50), (300, 301), (-900, -899), (1200, 1500)]

    def run() -> list[tuple[int, int]]:
        results = []
        for board in positions:
            for alpha, beta in windows:
                tree = AlphaBeta(Position(board.copy()), TranspositionTable(1), Features())
                results.append((tree.quiescence(alpha, beta, 0), tree.nodes))
        return results

    generated = 0
    tactical_moves = Position.tactical_moves

    def counting(pos: Position, underpromotions: bool = False) -> list[chess.Move]:
        nonlocal generated
        generated += 1
        return tactical_moves(pos, underpromotions)

    monkeypatch.setattr(Position, "tactical_moves", counting)
    with_shortcut, generated_with = run(), generated
    generated = 0
    monkeypatch.setattr(search.alphabeta, "_best_victim", lambda board: INFINITY)  # never below the bar
    assert run() == with_shortcut
    assert generated > generated_with  # the shortcut was taken, and saved generations


@pytest.mark.parametrize("chess960", [False, True])
def test_evasions_are_python_chess_evasions_in_its_order(chess960: bool) -> None:
    positions = random_positions(5 + chess960, 80, chess960, in_check=True)
    assert len(positions) > 1000
    double = sum(chess.popcount(board.checkers_mask()) > 1 for board in positions)
    assert double  # the king-only branch is exercised (test_tricky_evasions has more)
    for board in positions:
        assert evasions(board) == list(board.generate_legal_moves()), board.fen()
        assert Position(board).legal_moves() == list(board.generate_legal_moves()), board.fen()


@pytest.mark.parametrize("fen", [
    "4k3/8/8/8/8/8/4r3/4K3 w - - 0 1",  # the king may not step back along the checking file
    "4k3/8/8/3Pp3/5K2/8/8/8 w - e6 0 2",  # e.p. takes the checking pawn
    "3rk3/8/8/3Pp3/3K4/8/8/8 w - e6 0 2",  # ... but not by a pawn pinned on its file
    "4k3/8/8/8/8/8/3q4/4K2R w K - 0 1",  # no castling out of check
    "4k3/8/8/8/7q/8/3P4/3QKB1N w - - 0 1",  # a queen's check blocked on f2 or g3 by the knight
    "4k3/8/8/8/8/5n2/8/r3K3 w - - 0 1",  # double check: the king alone moves
    "4k3/8/8/8/8/5n2/3P4/r3K3 w - - 0 1",  # double check, and d2 could block the rook alone
])
def test_tricky_evasions(fen: str) -> None:
    board = chess.Board(fen)
    assert board.is_check()
    assert evasions(board) == list(board.generate_legal_moves())
