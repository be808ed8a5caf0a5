"""What does the learned evaluation cost per node, in microseconds?

A search node pays the net twice: once in `Position.push` (the accumulator
update of the move that reached it, and its `pop`) and once in
`Position.evaluate` (the head: `eval.accumulator.Accumulator.score`).
`bench` nps mixes both with move generation, ordering and the table; this
script times the two operations alone, with the net and with the classical
evaluation, on every legal move of the `bench` positions, so that the net's
own share can be read off and compared with the issue's target (5 us).

    python -m tools.node_cost [--net NET] [--repeat 5]

Each figure is the minimum over `--repeat` runs of the mean over all moves
(timeit's advice: the minimum is the run least disturbed by the machine).
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import chess

from eval import nnue
from search.position import Position
from uci_engine.diagnostics import BENCH_FENS


@dataclass(frozen=True)
class Cost:
    """Microseconds per operation for one evaluation."""

    push_pop: float
    evaluate: float


def sample(fens: list[str]) -> list[tuple[chess.Board, list[chess.Move]]]:
    """The positions to time, each with its legal moves (positions without any are left out)."""
    found = []
    for fen in fens:
        board = chess.Board(fen)
        moves = list(board.legal_moves)
        if moves:
            found.append((board, moves))
    return found


def _push_pop_seconds(positions: list[Position], moves: list[list[chess.Move]]) -> float:
    clock = time.perf_counter
    start = clock()
    for position, legal in zip(positions, moves):
        push, pop = position.push, position.pop
        for move in legal:
            push(move)
            pop()
    return clock() - start


def _evaluate_seconds(positions: list[Position], moves: list[list[chess.Move]]) -> float:
    """Evaluate the position after each move: the nodes a search would score.

    The evaluation cache is emptied before each call (untimed), or every run
    after the first would time dictionary hits, not the evaluation.
    """
    clock = time.perf_counter
    total = 0.0
    for position, legal in zip(positions, moves):
        evals = position.evals
        for move in legal:
            position.push(move)
            evals.clear()
            start = clock()
            position.evaluate()
            total += clock() - start
            position.pop()
    return total


def measure(net: nnue.Net | None, boards: list[tuple[chess.Board, list[chess.Move]]], repeat: int) -> Cost:
    """Per-move push+pop and per-node evaluate times (us) with `net` (None: classical) on `sample`'s boards."""
    positions = [Position(board.copy(), net) for board, _ in boards]
    moves = [legal for _, legal in boards]
    count = sum(len(legal) for legal in moves)
    push_pop = min(_push_pop_seconds(positions, moves) for _ in range(repeat))
    evaluate = min(_evaluate_seconds(positions, moves) for _ in range(repeat))
    return Cost(push_pop / count * 1e6, evaluate / count * 1e6)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--net", help="net file (default: the bundled one)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        net = nnue.load(args.net or nnue.BUNDLED)
    except nnue.NetError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    boards = sample(BENCH_FENS)
    moves = sum(len(legal) for _, legal in boards)
    classical = measure(None, boards, args.repeat)
    learned = measure(net, boards, args.repeat)
    print(f"{moves} moves of {len(BENCH_FENS)} bench positions, min of {args.repeat} runs, us per operation")
    print(f"{'':12}{'push+pop':>10}{'evaluate':>10}{'node':>10}")
    for name, cost in (("classical", classical), ("net", learned)):
        print(f"{name:12}{cost.push_pop:10.2f}{cost.evaluate:10.2f}{cost.push_pop + cost.evaluate:10.2f}")
    update = learned.push_pop - classical.push_pop
    head = learned.evaluate - classical.evaluate
    print(f"the net's own cost: accumulator update {update:.2f} + head {head:.2f} = {update + head:.2f} us per node")
    print(f"evaluation with the net (update + head + classical base): {update + learned.evaluate:.2f} us per node")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
