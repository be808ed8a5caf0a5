"""Self-play games at fixed nodes, with the engine's score on every move.

    python -m tools.selfplay --engine .venv/bin/pawnstorm --games 400 \
        --nodes 4000 --concurrency 2 --openings data/openings.epd \
        --out data/selfplay.pgn

Each game starts from a random opening of the EPD file; the node budget of
every move is jittered by +-25% so that games from the same opening differ.
Fixed nodes make the games independent of machine load.  Every move gets a
`[%eval ...]` comment holding the mover's search score converted to White's
point of view (the convention of lichess and python-chess), so the file can
be fed to the WDL fit (`training/wdl_fit.py`) and the Texel tuner as it is.
Adjudication keeps games short, as in engine testing: a game is resigned
once both sides' scores agree it is lost by more than 1000 cp for 4 plies in
a row, drawn once |score| <= 10 cp for 12 plies after ply 80, and drawn at
the 240-ply cap.  The games are played by `tools.match_game`, the loop every
game-playing tool shares; a move's hook collects the scores.  (Positions after that point would teach the models little:
they are decided or dead drawn.)
"""
from __future__ import annotations

import argparse
import concurrent.futures
import random
import shlex
import sys

import chess
import chess.pgn
from tqdm import tqdm

from tools.common import load_openings
from tools.match_game import EngineSpec, GameResult, Job, Move, play_game, rules

MAX_PLIES = 240
#: Adjudication (`tools.common.adjudicate`): resign at 1000 cp for 2 moves each, draw at
#: |score| <= 10 cp for 6 moves each once 40 moves are played.
RULES = dict(max_plies=MAX_PLIES, resign_score=1000, resign_moves=2, draw_score=10, draw_moves=6, draw_after=40,
             node_jitter=0.25, start_timeout=60.0, own_book=False)


def play_selfplay_game(command: list[str], start: chess.Board, nodes: int, seed: int) -> chess.pgn.Game:
    """One game of the engine against itself, every move annotated with its score (`tools.match_game`'s loop)."""
    engine = EngineSpec(command[-1].split("/")[-1], command)
    moves: list[Move] = []
    result: GameResult = play_game(Job(0, 0, engine, engine, start, seed), rules(nodes=nodes, **RULES), moves.append)
    game = chess.pgn.Game()
    game.setup(start)
    game.headers["Event"] = f"Self-play, {nodes} nodes"
    game.headers["White"] = game.headers["Black"] = engine.name
    game.headers["Result"] = result.result
    game.headers["Termination"] = result.reason
    node = game
    for played in moves:
        node = node.add_variation(played.move)
        if played.score is not None:
            node.set_eval(played.score)
    return game


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", required=True)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--nodes", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--openings", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    command = shlex.split(args.engine)
    openings = load_openings(args.openings)
    rng = random.Random(args.seed)
    jobs = [(rng.choice(openings), rng.randrange(1 << 30)) for _ in range(args.games)]
    with open(args.out, "w") as out, concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
        futures = [pool.submit(play_selfplay_game, command, start, args.nodes, seed) for start, seed in jobs]
        # Written in the order the games were dealt, not finished, so that the
        # same command writes the same file whatever the machine's load (fixed
        # nodes make each game itself reproducible).
        for future in tqdm(futures, unit="game"):
            print(future.result(), file=out, end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
