"""Where an engine loses its games against a stronger opponent, and whether more nodes would save them.

    python -m tools.drops --engine ps docs/logs/ladder-sf2200-10+0.1-9fe49035-part1.pgn.gz
    python -m tools.drops --engine ps GAMES.pgn.gz --replay "env -C <checkout> .venv/bin/python -m uci_engine" \
        --referee /usr/games/stockfish --nodes 8000 32000 128000 --depth 16 --max 40

Reads a match's games (`tools.match --pgn`: every move carries its mover's
`[%eval]`, from White's side) and trusts the opponent's evaluation.  For each
game `--engine` lost it finds:

* the move at which the opponent's evaluation, from its own side, first
  reaches `--decided` pawns (2): where the game was decided;
* the largest rise of that evaluation over one of our moves (and the
  opponent's answer) before then.  A rise of a pawn or more in one move is
  a tactical drop, not a slow squeeze.

and prints how the games were decided.  With `--replay ENGINE` it takes
the position before each drop of `--drop` pawns (1.5) or more and lets
ENGINE (UCI, own book off, a fresh game each time) choose a move there at
each `--nodes` budget; `--referee` (a UCI engine at full strength) scores
each choice at `--depth` against its own best move.  The mean loss in
centipawns and the number of choices that lose 100 or more, by budget,
say how many of the drops more nodes (depth) would have avoided.
"""
from __future__ import annotations

import argparse
import shlex
import statistics
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine
import chess.pgn

from training.pgn import finished_games, mainline_positions

#: A mate in the opponent's evaluation, in pawns (the rises are capped there too).
MATE_PAWNS = 99.0
#: Rises are counted up to this many pawns: past it the game is lost either way.
RISE_CAP = 5.0


@dataclass
class Loss:
    """One lost game, seen through the opponent's evaluation."""

    decided_at: int | None  # the move number at which the opponent's evaluation first reached the bar
    largest_rise: float  # pawns, over one of our moves before then
    drop: tuple[str, chess.Move] | None  # (FEN before our move, our move) of the first big drop


def _pawns(score: chess.engine.PovScore) -> float:
    """White's evaluation in pawns, a mate as +-MATE_PAWNS."""
    white = score.white()
    if white.is_mate():
        return MATE_PAWNS if white > chess.engine.Cp(0) else -MATE_PAWNS
    return white.score() / 100


def losses(game: chess.pgn.Game, engine: str, decided: float, drop: float) -> Loss | None:
    """What the opponent's evaluation says of `game`, if `engine` lost it (None: it did not, or did not play)."""
    names = game.headers.get("White"), game.headers.get("Black")
    if engine not in names:
        return None
    ours = chess.WHITE if names[0] == engine else chess.BLACK
    if game.headers.get("Result") != ("0-1" if ours == chess.WHITE else "1-0"):
        return None
    theirs = not ours
    previous: float | None = None  # the opponent's evaluation after its last move, from its side
    before: tuple[str, chess.Move] | None = None
    largest = 0.0
    first_drop = None
    for _, board, node in mainline_positions(game):  # the board before each move
        if board.turn == ours:
            before = (board.fen(), node.move)
            continue
        score = node.eval()
        if score is None:
            continue
        value = _pawns(score) * (1 if theirs == chess.WHITE else -1)
        if previous is not None:
            rise = min(value, RISE_CAP) - previous
            largest = max(largest, rise)
            if rise >= drop and first_drop is None and before is not None:
                first_drop = before
        if value >= decided:
            return Loss(board.fullmove_number, largest, first_drop)
        previous = value
    return Loss(None, largest, first_drop)


def read_losses(paths: list[Path], engine: str, decided: float, drop: float) -> list[Loss]:
    """The losses of `engine` among the decided games of the files."""
    found = []
    for game, _ in finished_games(str(path) for path in paths):
        loss = losses(game, engine, decided, drop)
        if loss is not None:
            found.append(loss)
    return found


def report(found: list[Loss], decided: float) -> None:
    moves = sorted(loss.decided_at for loss in found if loss.decided_at is not None)
    print(f"lost games: {len(found)}; the opponent's evaluation reached +{decided:g} in {len(moves)}")
    if len(moves) >= 4:
        quartiles = statistics.quantiles(moves, n=4)
        print(f"  at move: median {statistics.median(moves):g}, quartiles {quartiles[0]:g} and {quartiles[2]:g}")
    for low, high in ((0.0, 0.5), (0.5, 1.0), (1.0, 2.0), (2.0, None)):
        count = sum(loss.largest_rise >= low and (high is None or loss.largest_rise < high) for loss in found)
        label = f"{low:g} or more" if high is None else f"{low:g} to {high:g}"
        print(f"  largest one-move rise before then, {label} pawns: {count}")


def replay(drops: list[tuple[str, chess.Move]], command: str, referee_command: str, budgets: list[int],
           depth: int) -> dict[int, list[int]]:
    """The loss in centipawns of the engine's choice at each budget, for each position."""
    results: dict[int, list[int]] = {budget: [] for budget in budgets}
    with chess.engine.SimpleEngine.popen_uci(shlex.split(command)) as engine, \
            chess.engine.SimpleEngine.popen_uci(shlex.split(referee_command)) as referee:
        if "OwnBook" in engine.options:
            engine.configure({"OwnBook": False})
        limit = chess.engine.Limit(depth=depth)
        for fen, _ in drops:
            board = chess.Board(fen)
            best = referee.analyse(board, limit)["score"].pov(board.turn).score(mate_score=10_000)
            for budget in budgets:
                move = engine.play(board, chess.engine.Limit(nodes=budget), game=object()).move
                assert move is not None
                score = referee.analyse(board, limit, root_moves=[move])["score"].pov(board.turn).score(mate_score=10_000)
                results[budget].append(min(1000, max(0, best - score)))
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pgn", nargs="+", type=Path, help="a match's games (plain or .gz), moves with [%%eval]")
    parser.add_argument("--engine", required=True, help="the name of the engine whose losses to study")
    parser.add_argument("--decided", type=float, default=2.0, help="pawns at which a game counts as decided")
    parser.add_argument("--drop", type=float, default=1.5, help="a one-move rise (pawns) that --replay looks at")
    parser.add_argument("--replay", metavar="ENGINE", help="UCI command to choose a move before each drop")
    parser.add_argument("--referee", default="stockfish", help="UCI command that scores the choices")
    parser.add_argument("--nodes", type=int, nargs="+", default=[8000, 32000, 128000])
    parser.add_argument("--depth", type=int, default=16, help="the referee's depth")
    parser.add_argument("--max", type=int, default=40, help="at most this many drops to replay")
    args = parser.parse_args(argv)
    found = read_losses(args.pgn, args.engine, args.decided, args.drop)
    report(found, args.decided)
    if not args.replay:
        return
    drops = [loss.drop for loss in found if loss.drop is not None][:args.max]
    print(f"replaying the {len(drops)} first drops of {args.drop:g} pawns or more")
    for budget, lost in replay(drops, args.replay, args.referee, args.nodes, args.depth).items():
        if lost:
            print(f"  {budget} nodes: mean loss {statistics.mean(lost):.0f} cp, "
                  f"{sum(cp >= 100 for cp in lost)} of {len(lost)} lose 100 cp or more")


if __name__ == "__main__":
    main()
