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

    python -m tools.clock --pgn docs/logs/ladder-sf2200-20+0.2-9fe49035.pgn.gz

reads the games of a match instead (`tools.match --pgn` writes each move's
think time and clock left as `[%emt ...] [%clk ...]`; gzip or plain), and
prints the same table for each engine of them, by the name in its games'
White and Black tags: how an engine spent its clock against that opponent.
"""
from __future__ import annotations

import argparse
import random
import shlex
import statistics
import sys
from pathlib import Path

import chess
import chess.pgn

from tools.common import load_openings
from tools.match_game import EngineSpec, Job, Move, play_game, rules
from training.pgn import mainline_positions, open_pgn

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


def pgn_records(path: Path) -> dict[str, list[tuple[int, float, float]]]:
    """(move number, think seconds, clock left after the move) of every timed move in a PGN file, by engine name."""
    records: dict[str, list[tuple[int, float, float]]] = {}
    with open_pgn(str(path)) as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            names = {chess.WHITE: game.headers.get("White", "?"), chess.BLACK: game.headers.get("Black", "?")}
            for _, board, node in mainline_positions(game):  # the board before each move
                spent, left = node.emt(), node.clock()
                if spent is not None and left is not None:
                    records.setdefault(names[board.turn], []).append((board.fullmove_number, spent, left))
    return records


def print_table(record: list[tuple[int, float, float]]) -> None:
    """The mean think time and clock left of each ten-move stage."""
    stages: dict[int, list[tuple[float, float]]] = {}
    for number, spent, left in record:
        stages.setdefault((number - 1) // STAGE, []).append((spent, left))
    print(f"{'moves':>9} | {'plies':>5} | {'think s (mean)':>14} | {'clock left s (mean)':>19}")
    for stage in sorted(stages):
        rows = stages[stage]
        print(f"{stage * STAGE + 1:>4}-{stage * STAGE + STAGE:<4} | {len(rows):5d} | "
              f"{statistics.mean(r[0] for r in rows):14.3f} | {statistics.mean(r[1] for r in rows):19.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--engine", help="UCI command")
    source.add_argument("--pgn", nargs="+", type=Path, help="a match's PGN files (plain or .gz) to read instead")
    parser.add_argument("--tc", default="10+0.1", help="BASE+INC in seconds, or MOVES/BASE[+INC]")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--openings", help="EPD file of start positions")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-plies", type=int, default=200)
    args = parser.parse_args(argv)
    if args.pgn:
        records: dict[str, list[tuple[int, float, float]]] = {}
        for path in args.pgn:
            for name, record in pgn_records(path).items():
                records.setdefault(name, []).extend(record)
        if not records:
            parser.error("no move in these files carries [%emt] and [%clk]")
        for name in sorted(records):
            print(name)
            print_table(records[name])
        return
    starts = load_openings(args.openings)
    rng = random.Random(args.seed)
    record: list[tuple[int, float, float]] = []
    for _ in range(args.games):
        record += play_clock_game(args.engine, rng.choice(starts).copy(), args.tc, args.max_plies)
    print_table(record)


if __name__ == "__main__":
    main()
