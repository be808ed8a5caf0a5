"""Stockfish-style diagnostic commands: `bench` (the search's signature and speed), `perft`, `d`."""
from __future__ import annotations

import time
from typing import Callable

import chess
import chess.polyglot

from eval.nnue import Net
from search.driver import Searcher
from search.features import Features
from search.smp import ParallelSearcher
from search.tablebase import Tablebases
from search.timeman import Limits
from search.tt import DEFAULT_HASH_MB

#: Varied positions for `bench`: openings, middlegames, tactics, endgames.
#: Its node total is the search's signature: any change to search or
#: evaluation that changes the tree changes it.
BENCH_FENS = [
    chess.STARTING_FEN,
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "rnbqkb1r/pp3ppp/4pn2/2pp4/2PP4/2N2N2/PP2PPPP/R1BQKB1R w KQkq - 0 5",
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 1 8",
    "rnbqkb1r/1p2pppp/p2p1n2/8/3NP3/2N5/PPP2PPP/R1BQKB1R w KQkq - 0 6",
    "r2q1rk1/pp2ppbp/2np1np1/8/3NP1b1/2N1BP2/PPPQ2PP/R3KB1R w KQ - 3 9",
    "r1b2rk1/2q1bppp/p2ppn2/1p6/3BPP2/2N2B2/PPPQ2PP/2KR3R w - - 0 13",
    "2rq1rk1/pb2bppp/1pn1pn2/2pp4/3P4/1PNBPN2/PBQ2PPP/2R2RK1 w - - 0 12",
    "r1bqr1k1/pp1n1pbp/2pp1np1/4p3/2PPP3/2N2NP1/PP3PBP/R1BQR1K1 w - - 0 10",
    "3r1rk1/p1q2ppp/1pb1pn2/2p5/2P5/1P2PN2/PBQ2PPP/3R1RK1 w - - 0 16",
    "r4rk1/pp1b1ppp/1qn1pn2/3p4/1b1P4/2NBPN2/PP1BQPPP/R4RK1 w - - 4 11",
    "2r2rk1/1bqnbppp/pp1ppn2/8/2PNP3/1PN1B3/P2QBPPP/2RR2K1 w - - 0 14",
    "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/RNBQ1RK1 w - - 1 7",
    "1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - 0 1",
    "3r1k2/4npp1/1ppr3p/p6P/P2PPPP1/1NR5/5K2/2R5 w - - 0 1",
    "2q1rr1k/3bbnnp/p2p1pp1/2pPp3/PpP1P1P1/1P2BNNP/2BQ1PRK/7R b - - 0 1",
    "rnbqkb1r/p3pppp/1p6/2ppP3/3N4/2P5/PPP1QPPP/R1B1KB1R w KQkq - 0 1",
    "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1",
    "2r3k1/pppR1pp1/4p3/4P1P1/5P2/1P4K1/P1P5/8 w - - 0 1",
    "1nk1r1r1/pp2n1pp/4p3/q2pPp1N/b1pP1P2/B1P2R2/2P1B1PP/R2Q2K1 w - - 0 1",
    "4b3/p3kp2/6p1/3pP2p/2pP1P2/4K1P1/P3N2P/8 w - - 0 1",
    "2kr1bnr/pbpq4/2n1pp2/3p3p/3P1P1B/2N2N1Q/PPP3PP/2KR1B1R w - - 0 1",
    "3rr1k1/pp3pp1/1qn2np1/8/3p4/PP1R1P2/2P1NQPP/R1B3K1 b - - 0 1",
    "2r1nrk1/p2q1ppp/bp1p4/n1pPp3/P1P1P3/2PBB1N1/4QPPP/R4RK1 w - - 0 1",
    "r3r1k1/ppqb1ppp/8/4p1NQ/8/2P5/PP3PPP/R3R1K1 b - - 0 1",
    "r2q1rk1/4bppp/p2p4/2pP4/3pP3/3Q4/PP1B1PPP/R3R1K1 w - - 0 1",
    "8/8/1p2k3/p1p1p3/P1P1P3/1P2K3/8/8 w - - 0 1",
    "8/pp2r1k1/2p1p3/3pP2p/1P1P1P1P/P5KR/8/8 w - - 0 1",
    "8/3p4/p1bk3p/Pp6/1Kp1PpPp/2P2P1P/2P5/5B2 b - - 0 1",
    "5k2/7R/4P2p/5K2/p1r2P1p/8/8/8 b - - 0 1",
    "6k1/6p1/P6p/r1N5/5p2/7P/1b3PP1/4R1K1 w - - 0 1",
    "1r3k2/4q3/2Pp3b/3Bp3/2Q2p2/1p1P2P1/1P2KP2/3N4 w - - 0 1",
    "6k1/4pp1p/3p2p1/P1pPb3/R7/1r2P1PP/3B1P2/6K1 w - - 0 1",
    "8/3k4/8/8/8/4K3/7R/8 w - - 0 1",
    "8/8/3k4/8/2QK4/8/8/8 w - - 0 1",
]

DEFAULT_BENCH_DEPTH = 5


def bench(depth: int = DEFAULT_BENCH_DEPTH, hash_mb: int = DEFAULT_HASH_MB, emit: Callable[[str], None] = print,
          net: Net | None = None, tablebases: Tablebases | None = None, threads: int = 1,
          features: Features = Features()) -> tuple[int, float]:
    """Search every bench position to `depth` from a clean table; (nodes, seconds).

    `net` is the evaluation to search with (None: the classical one);
    `tablebases` the endgame tables (None: none, the signature's setting).
    With tables the node count changes where they are probed, and the
    speed shows what the probes cost (docs/tablebases.md).

    A fresh `Searcher` per position keeps the node count independent of
    position order and of anything searched before, so it is reproducible.
    With `threads` > 1 one searcher and its helper processes (started before
    the clock) serve every position, cleared in between; the count then
    includes the helpers' nodes and varies from run to run, and the time is
    the time to reach `depth` (docs/parallel.md).
    """
    total_nodes = 0
    hits_before = tablebases.hits if tablebases is not None else 0
    parallel: ParallelSearcher | None = None
    if threads > 1:
        parallel = ParallelSearcher(hash_mb, features, net=net)
        parallel.set_threads(threads)
        parallel.tablebases = tablebases
    start = time.perf_counter()
    try:
        for index, fen in enumerate(BENCH_FENS, 1):
            board = chess.Board(fen)
            if parallel is not None:
                parallel.clear()
                searcher: Searcher = parallel
            else:
                searcher = Searcher(hash_mb, features, net=net)
                searcher.tablebases = tablebases
            result = searcher.search(board, Limits(depth=depth))
            total_nodes += result.nodes
            emit(f"Position: {index}/{len(BENCH_FENS)} ({fen}) bestmove {result.best_move} nodes {result.nodes}")
        elapsed = time.perf_counter() - start
    finally:  # helpers and the shared table go even when the report cannot be written
        if parallel is not None:
            parallel.close()
    emit("")
    emit("===========================")
    emit(f"Total time (ms) : {int(elapsed * 1000)}")
    emit(f"Nodes searched  : {total_nodes}")
    emit(f"Nodes/second    : {int(total_nodes / elapsed) if elapsed > 0 else 0}")
    if tablebases is not None:
        emit(f"Tablebase hits  : {tablebases.hits - hits_before}")
    return total_nodes, elapsed


def perft(board: chess.Board, depth: int) -> int:
    """Leaf nodes of the legal move tree (python-chess move generation)."""
    if depth <= 0:
        return 1
    if depth == 1:
        return board.legal_moves.count()
    total = 0
    for move in board.generate_legal_moves():
        board.push(move)
        total += perft(board, depth - 1)
        board.pop()
    return total


def divide(board: chess.Board, depth: int, emit: Callable[[str], None] = print) -> int:
    """Stockfish's `go perft` output: count per root move, then the total."""
    total = 0
    depth = max(depth, 1)
    for move in list(board.generate_legal_moves()):
        board.push(move)
        count = perft(board, depth - 1)
        board.pop()
        total += count
        emit(f"{move.uci()}: {count}")
    emit("")
    emit(f"Nodes searched: {total}")
    return total


def display(board: chess.Board) -> str:
    """The `d` command: a diagram, the FEN, the polyglot key and the checkers."""
    rows = ["", " +---+---+---+---+---+---+---+---+"]
    for rank in range(7, -1, -1):
        cells = []
        for file in range(8):
            piece = board.piece_at(chess.square(file, rank))
            cells.append(piece.symbol() if piece else " ")
        rows.append(" | " + " | ".join(cells) + f" | {rank + 1}")
        rows.append(" +---+---+---+---+---+---+---+---+")
    rows.append("   a   b   c   d   e   f   g   h")
    rows.append("")
    rows.append(f"Fen: {board.fen()}")
    rows.append(f"Key: {chess.polyglot.zobrist_hash(board):016X}")
    checkers = " ".join(chess.square_name(sq) for sq in board.checkers())
    rows.append(f"Checkers: {checkers}")
    return "\n".join(rows)
