"""How an engine spends its clock: think time per move and time left, by game stage.

    python -m tools.clock --engine "python3 -m uci_engine" --tc 10+0.1 --games 4 \
        --openings data/openings.epd

Plays the engine against itself (both sides the same command) with a real
clock and prints, per ten-move stage, the mean think time and the clock left
at the stage's end.  A time manager is judged by this: too little thinking in
the middlegame wastes strength; too much early leaves nothing for the ending.
The figures depend on the machine; compare two engines in one run.  The
games are played by `tools.match_game` (the tools' one game loop), whose
per-move hook records each move's time.
"""
from __future__ import annotations

import argparse
import random
import shlex
import statistics
import sys

import chess

from tools.common import load_openings
from tools.match_game import EngineSpec, Job, Move, play_game, rules

STAGE = 10  # moves per row of the table


def play_clock_game(command: str, board: chess.Board, tc: str, max_plies: int) -> list[tuple[int, float, float]]:
    """(move number, think seconds, clock left after the move) of every move of one game."""
    engine = EngineSpec("engine", shlex.split(command))
    record: list[tuple[int, float, float]] = []

    def note(played: Move) -> None:
        assert played.clock_left is not None
        record.append((played.board.fullmove_number, played.seconds, played.clock_left))

    result = play_game(Job(0, 0, engine, engine, board), rules(tc=tc, max_plies=max_plies, resign_score=0,
                                                               draw_score=None, own_book=False), note)
    for fault in result.faults:
        print(f"{fault} after {len(record)} moves", file=sys.stderr)
    return record


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", required=True, help="UCI command")
    parser.add_argument("--tc", default="10+0.1", help="BASE+INC in seconds, or MOVES/BASE[+INC]")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--openings", help="EPD file of start positions")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-plies", type=int, default=200)
    args = parser.parse_args(argv)
    starts = load_openings(args.openings)
    rng = random.Random(args.seed)
    stages: dict[int, list[tuple[float, float]]] = {}
    for _ in range(args.games):
        for number, spent, left in play_clock_game(args.engine, rng.choice(starts).copy(), args.tc, args.max_plies):
            stages.setdefault((number - 1) // STAGE, []).append((spent, left))
    print(f"{'moves':>9} | {'plies':>5} | {'think s (mean)':>14} | {'clock left s (mean)':>19}")
    for stage in sorted(stages):
        rows = stages[stage]
        print(f"{stage * STAGE + 1:>4}-{stage * STAGE + STAGE:<4} | {len(rows):5d} | "
              f"{statistics.mean(r[0] for r in rows):14.3f} | {statistics.mean(r[1] for r in rows):19.2f}")


if __name__ == "__main__":
    main()
