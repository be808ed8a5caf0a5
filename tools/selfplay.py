#!/usr/bin/env python3
"""Self-play games at fixed nodes, with the engine's score on every move.

    python tools/selfplay.py --engine .venv/bin/pawnstorm --games 400 \
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
the 240-ply cap.  (Positions after that point would teach the models little:
they are decided or dead drawn.)
"""
from __future__ import annotations

import argparse
import concurrent.futures
import random
import shlex
import sys

import chess
import chess.engine
import chess.pgn
from tqdm import tqdm

from common import MATE_SCORE, adjudicate, load_openings, open_engine

MAX_PLIES = 240
RESIGN_SCORE, RESIGN_PLIES = 1000, 4
DRAW_SCORE, DRAW_PLIES, DRAW_AFTER = 10, 12, 80


def play_game(command: list[str], fen: str, nodes: int, seed: int) -> chess.pgn.Game:
    """One game of the engine against itself, every move annotated with its score."""
    rng = random.Random(seed)
    board = chess.Board(fen)
    game = chess.pgn.Game()
    game.setup(board)
    game.headers["Event"] = f"Self-play, {nodes} nodes"
    node = game
    white_scores: list[int] = []
    adjudicated = None
    with open_engine(command, book=False) as engine:
        game.headers["White"] = game.headers["Black"] = engine.id.get("name", command)
        while not board.is_game_over(claim_draw=True) and board.ply() < MAX_PLIES and adjudicated is None:
            budget = int(nodes * rng.uniform(0.75, 1.25))
            result = engine.play(board, chess.engine.Limit(nodes=budget), info=chess.engine.INFO_SCORE)
            if result.move is None:
                break
            node = node.add_variation(result.move)
            score = result.info.get("score")
            if score is not None:
                node.set_eval(score)
                white_scores.append(score.white().score(mate_score=MATE_SCORE))
            board.push(result.move)
            adjudicated = adjudicate(white_scores, board.ply(), resign_score=RESIGN_SCORE, resign_plies=RESIGN_PLIES,
                                     draw_score=DRAW_SCORE, draw_plies=DRAW_PLIES, draw_after=DRAW_AFTER)
    outcome = board.outcome(claim_draw=True)
    game.headers["Result"] = outcome.result() if outcome else adjudicated or "1/2-1/2"
    return game


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", required=True)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--nodes", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--openings", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    command = shlex.split(args.engine)
    openings = [board.fen() for board in load_openings(args.openings)]
    rng = random.Random(args.seed)
    jobs = [(rng.choice(openings), rng.randrange(1 << 30)) for _ in range(args.games)]
    with open(args.out, "w") as out, concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
        futures = [pool.submit(play_game, command, fen, args.nodes, seed) for fen, seed in jobs]
        # Written in the order the games were dealt, not finished, so that the
        # same command writes the same file whatever the machine's load (fixed
        # nodes make each game itself reproducible).
        for future in tqdm(futures, unit="game"):
            print(future.result(), file=out, end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
