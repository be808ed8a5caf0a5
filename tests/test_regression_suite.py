"""Strength regression layer: tactical suites at fixed nodes must not lose solutions.

Node limits make every search deterministic (a fresh searcher per position,
no clock), so the solved counts below are exact, machine-independent
levels.  They are the levels recorded in docs/strength.md; a change that
makes the engine solve more should raise them, a change that solves fewer
fails here and must justify itself with a match.

Data: the first 60 positions of Win At Chess (WAC.001-060) and the 14
mate-in-3 problems of data/suites/mate3.fen, copied to tests/data.
"""
from __future__ import annotations

from pathlib import Path

import chess
import pytest
from search.driver import Searcher
from search.types import MATE
from search.timeman import Limits

#: Searches of tens of thousands of nodes in 70 positions: about half a minute.
pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parent / "data"
WAC_NODES = 20_000
#: Solved at WAC_NODES when the level was recorded (see docs/strength.md).
WAC_SOLVED = 50
MATE3_NODES = 60_000
MATE3_SOLVED = 10


def solves(board: chess.Board, nodes: int, good: set[chess.Move], bad: set[chess.Move]) -> bool:
    move = Searcher(16).search(board, Limits(nodes=nodes)).best_move
    return move is not None and (not good or move in good) and move not in bad


def wac_entries() -> list[tuple[chess.Board, set[chess.Move], set[chess.Move]]]:
    entries = []
    for line in (DATA / "wac-first60.epd").read_text().splitlines():
        board, ops = chess.Board.from_epd(line)
        entries.append((board, set(ops.get("bm", [])), set(ops.get("am", []))))
    return entries


def mate3_entries() -> list[chess.Board]:
    return [chess.Board(line) for line in (DATA / "mate3.fen").read_text().splitlines() if line.strip()]


def test_wac_subset_at_fixed_nodes() -> None:
    solved = sum(solves(board, WAC_NODES, good, bad) for board, good, bad in wac_entries())
    print(f"WAC 1-60 at {WAC_NODES} nodes: solved {solved}/60")
    assert solved >= WAC_SOLVED


def test_mate_in_three_at_fixed_nodes() -> None:
    solved = 0
    for board in mate3_entries():
        result = Searcher(16).search(board, Limits(nodes=MATE3_NODES))
        # Mate in 3 moves is 5 plies: the score proves it (the mate-score
        # arithmetic itself is tested against minimax in test_alphabeta).
        solved += result.score >= MATE - 5 and result.best_move in board.legal_moves
    print(f"mate in 3 at {MATE3_NODES} nodes: solved {solved}/14")
    assert solved >= MATE3_SOLVED
