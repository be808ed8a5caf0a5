"""bench and perft: the command-line tools users and CI rely on."""
from __future__ import annotations

import chess
import pytest

from uci_engine.diagnostics import BENCH_FENS, bench, divide, perft


@pytest.mark.parametrize("fen, depth, expected", [
    (chess.STARTING_FEN, 3, 8902),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 2, 2039),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 3, 2812),
])
def test_perft_matches_known_counts(fen: str, depth: int, expected: int) -> None:
    assert perft(chess.Board(fen), depth) == expected
    lines: list[str] = []
    assert divide(chess.Board(fen), depth, lines.append) == expected
    assert lines[-1] == f"Nodes searched: {expected}"
    assert sum(int(line.split(": ")[1]) for line in lines[:-2]) == expected


def test_bench_positions_are_valid_and_varied() -> None:
    boards = [chess.Board(fen) for fen in BENCH_FENS]
    assert len(boards) >= 40
    assert all(board.is_valid() for board in boards)
    piece_counts = {chess.popcount(board.occupied) for board in boards}
    assert min(piece_counts) <= 5 and max(piece_counts) == 32


def test_bench_node_count_is_deterministic_and_reported_like_stockfish() -> None:
    first: list[str] = []
    second: list[str] = []
    nodes, _ = bench(2, emit=first.append)
    nodes_again, _ = bench(2, emit=second.append)
    assert nodes == nodes_again > 0
    assert f"Nodes searched  : {nodes}" in first
    assert any(line.startswith("Total time (ms) : ") for line in first)
    assert any(line.startswith("Nodes/second    : ") for line in first)
    assert [l for l in first if "Position" in l] == [l for l in second if "Position" in l]
