"""Iterative deepening is anytime: a stop at any moment yields a sound move."""
from __future__ import annotations

import random
import threading

import chess
import pytest

from search.alphabeta import CHECK_EVERY
from search.driver import Iteration, Searcher
from search.timeman import Limits

FENS = [
    chess.STARTING_FEN,
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "2r3k1/pppR1pp1/4p3/4P1P1/5P2/1P4K1/P1P5/8 w - - 0 1",
    "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1",
]


def check_answer(board: chess.Board, best: chess.Move | None, reports: list[Iteration]) -> None:
    assert best is not None and best in board.legal_moves
    completed = [r for r in reports if not r.partial and r.bound == 0]
    if reports and reports[-1].partial:
        # Stopped after a root improvement: it is the answer, one depth deeper.
        assert best == reports[-1].pv[0]
        assert not completed or reports[-1].depth == completed[-1].depth + 1
    elif completed:
        assert best == completed[-1].pv[0]


@pytest.mark.parametrize("seed", range(12))
def test_stop_at_a_random_moment(seed: int) -> None:
    rng = random.Random(seed)
    board = chess.Board(FENS[seed % len(FENS)])
    stop = threading.Event()
    reports: list[Iteration] = []
    timer = threading.Timer(rng.uniform(0.0, 0.4), stop.set)
    timer.start()
    try:
        result = Searcher(8).search(board, Limits(infinite=True), stop=stop, on_iteration=reports.append)
    finally:
        timer.cancel()
    check_answer(board, result.best_move, reports)


@pytest.mark.parametrize("nodes", [1, 7, 64, 300, 1500, 4000, 9000, 20000])
def test_stop_at_a_node_count(nodes: int) -> None:
    """Node limits abort mid-depth deterministically; the answer is still sound."""
    board = chess.Board(FENS[2])
    reports: list[Iteration] = []
    result = Searcher(8).search(board, Limits(nodes=nodes), on_iteration=reports.append)
    check_answer(board, result.best_move, reports)
    # Stopped at the first look at the count (every CHECK_EVERY nodes) at or past the limit.
    assert nodes <= result.nodes < nodes + CHECK_EVERY
    assert all(report.nodes <= result.nodes for report in reports)
    again = Searcher(8).search(board, Limits(nodes=nodes))
    assert (again.best_move, again.nodes) == (result.best_move, result.nodes)


def test_forced_move_is_played_without_a_long_think() -> None:
    board = chess.Board("7k/8/8/8/8/8/6q1/7K w - - 0 1")  # Kxg2 is the only legal move
    reports: list[Iteration] = []
    result = Searcher(8).search(board, Limits(wtime=60_000, btime=60_000), on_iteration=reports.append)
    assert result.best_move == chess.Move.from_uci("h1g2")
    assert len(reports) == 1


def test_searchmoves_restricts_the_root() -> None:
    board = chess.Board()
    for allowed in (["a2a3"], ["h2h4", "b1a3"]):
        result = Searcher(8).search(board, Limits(depth=3, searchmoves=allowed))
        assert result.best_move.uci() in allowed
