"""One game between engines (UCI or xboard): the engines, the clock, adjudication and faults.

The one game loop of the tools: `tools.match` plays its matches with it,
`tools.selfplay` its annotated self-play games and `tools.clock` its
time-use tables, each watching the moves through `play_game`'s per-move
hook.  Kept apart from match.py so that a game's rules can be read (and
tested) without the runner's scheduling, SPRT and reporting.  A game ends by the
rules of chess, by adjudication, at the ply cap, or by a fault of one side,
which loses the game (an xboard engine may also resign, which is a loss
and no fault):

  crash    the engine failed to start, refused an option or died
  illegal  it answered with a move that is illegal (or not a move) there
  time     it moved, but past its clock by more than --time-margin
  stall    it gave no move at all within the wait (--move-timeout, or its
           clock plus 5 s); it is then closed, not asked to quit

Faults are the point of running many games: a match whose fault count is
not 0 says something about the engine before it says anything about Elo.
"""
from __future__ import annotations

import argparse
import asyncio
import concurrent.futures as cf
import random
import shlex
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import chess
import chess.engine
import chess.pgn

from tools.common import MATE_SCORE, Clock, adjudicate, open_engine

#: The result when that side forfeits.
LOSS = {chess.WHITE: "0-1", chess.BLACK: "1-0"}

#: Seconds past its clock the runner still waits for a move before calling it a stall.
STALL_GRACE = 5.0

FAULT_KINDS = ("crash", "illegal", "time", "stall")


@dataclass
class EngineSpec:
    """An engine as the command line gives it: `--engine NAME=COMMAND`, its `--option NAME.Opt=value`, `--xboard NAME`."""

    name: str
    cmd: list[str]
    options: dict[str, str] = field(default_factory=dict)
    #: "uci" or "xboard" (CECP, spoken by many older engines: python-chess plays both).
    protocol: str = "uci"


def parse_engine(text: str) -> EngineSpec:
    """NAME=COMMAND, or a bare command named after its last path part."""
    name, sep, cmd = text.partition("=")
    if not sep:
        name, cmd = text.split("/")[-1], text
    return EngineSpec(name, shlex.split(cmd))


@dataclass(frozen=True)
class Fault:
    """Why `engine` lost a game it did not lose over the board."""

    engine: str
    kind: str  # one of FAULT_KINDS
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


@dataclass(frozen=True)
class Job:
    """One game to play: game `number` of the match, the `pair`-th opening, colours as given."""

    number: int
    pair: int
    white: EngineSpec
    black: EngineSpec
    start: chess.Board
    #: Seeds the game's own randomness (the node budgets' jitter, `Rules.node_jitter`).
    seed: int = 0


@dataclass(frozen=True)
class Move:
    """What the per-move hook of `play_game` is shown of each move, before it is played."""

    board: chess.Board  # the position the move was chosen in (not to be changed)
    move: chess.Move
    score: chess.engine.PovScore | None  # the mover's last reported score, if any
    seconds: float  # the mover's think time, as the runner measured it
    clock_left: float | None  # the mover's clock after the move (None without a clock)


#: Every rule `play_game` reads, with its default: `tools.match`'s command line takes its
#: defaults from here, and `rules` starts from here, so the two cannot drift apart.
RULE_DEFAULTS: dict[str, object] = dict(
    tc=None, nodes=None, depth=None, movetime=None, ponder=False, max_plies=400, time_margin=0.05,
    start_timeout=20.0, move_timeout=120.0, resign_score=700, resign_moves=4, draw_score=10, draw_moves=8,
    draw_after=40, node_jitter=0.0, own_book=True)


def rules(**changes: object) -> argparse.Namespace:
    """`RULE_DEFAULTS` with `changes` (the namespace `play_game` reads).

    For the tools that play games without match.py's command line:
    ``rules(nodes=2000, node_jitter=0.25, max_plies=240)``.
    """
    settings = argparse.Namespace(**RULE_DEFAULTS)
    for name, value in changes.items():
        if not hasattr(settings, name):
            raise TypeError(f"no game rule named {name!r}")
        setattr(settings, name, value)
    return settings


@dataclass
class GameResult:
    number: int
    opening: int  # the game pair (both colours of one opening)
    white: str
    black: str
    result: str  # "1-0", "0-1", "1/2-1/2"
    reason: str
    faults: list[Fault]
    pgn: str


class Forfeit(Exception):
    """Raised inside a game when one side faults; the game ends there."""

    def __init__(self, colour: chess.Color, fault: Fault, reason: str) -> None:
        super().__init__(reason)
        self.colour, self.fault, self.reason = colour, fault, reason


def play_game(job: Job, args: argparse.Namespace, on_move: Callable[[Move], None] | None = None) -> GameResult:
    """Play `job` to its end under the match's limits (`rules`); faults are scored, never raised.

    `on_move`, if given, is shown every move before it is played (`Move`).
    """
    specs = {chess.WHITE: job.white, chess.BLACK: job.black}
    engines: dict[chess.Color, chess.engine.SimpleEngine] = {}
    hung: set[chess.Color] = set()  # engines that stopped answering: closed, not asked to quit
    board = job.start.copy()
    faults: list[Fault] = []
    played: list[Move] = []  # every move pushed, for the PGN's comments

    def record(move: Move) -> None:
        played.append(move)
        if on_move is not None:
            on_move(move)

    try:
        for colour, spec in specs.items():
            engines[colour] = _start(spec, colour, args)
        result, reason = _play_out(specs, engines, hung, board, job, args, record)
    except Forfeit as forfeit:
        faults.append(forfeit.fault)
        result, reason = LOSS[forfeit.colour], forfeit.reason
    finally:
        _close(engines, hung)
    game = chess.pgn.Game.from_board(board)
    game.headers.update(White=job.white.name, Black=job.black.name, Result=result,
                        Round=f"{job.pair + 1}.{job.number % 2 + 1}", Termination=reason)
    for node, move in zip(game.mainline(), played):
        _annotate(node, move)
    return GameResult(job.number, job.pair, job.white.name, job.black.name, result, reason, faults, str(game))


def _annotate(node: chess.pgn.ChildNode, move: Move) -> None:
    """The mover's score and, on a clock, its think time and clock after the move, as lichess and
    cutechess write them (`[%eval 0.25] [%emt 0:00:00.53] [%clk 0:00:08.40]`): a game's time use
    can be read back.  Without a clock no time is written, so a game at fixed nodes is the same
    text however fast the machine."""
    if move.score is not None:
        node.set_eval(move.score)
    if move.clock_left is not None:
        node.set_emt(move.seconds)
        node.set_clock(max(move.clock_left, 0.0))


def play_pair(jobs: Sequence[Job], args: argparse.Namespace,
              keep_going: Callable[[], bool] = lambda: True) -> list[GameResult]:
    """Play the games of one pair (an opening with colours swapped) in order, each by `play_game`.

    The unit of work of `match.py --cluster` (tools/match_cluster.py): one
    task per pair, so both games of an opening meet the same worker and a
    pair comes back whole for the pentanomial.  `keep_going()` is asked
    before each game; once it says no (the SPRT has decided), the games
    played so far are returned and no other starts.
    """
    results = []
    for job in jobs:
        if not keep_going():
            break
        results.append(play_game(job, args))
    return results


def _start(spec: EngineSpec, colour: chess.Color, args: argparse.Namespace) -> chess.engine.SimpleEngine:
    """The started engine; a Forfeit when it does not start or refuses an option."""
    try:
        return open_engine(spec.cmd, spec.options, book=args.own_book, timeout=args.start_timeout,
                           protocol=spec.protocol)
    except Exception as exc:
        raise Forfeit(colour, Fault(spec.name, "crash", f"failed to start: {exc}"),
                      f"{spec.name} failed to start") from exc


def _play_out(specs: dict[chess.Color, EngineSpec], engines: dict[chess.Color, chess.engine.SimpleEngine],
              hung: set[chess.Color], board: chess.Board, job: Job, args: argparse.Namespace,
              on_move: Callable[[Move], None] | None) -> tuple[str, str]:
    """(result, reason) of the game from `board` on; moves are pushed onto `board` (the PGN's source)."""
    clock = Clock(args.tc) if args.tc else None
    rng = random.Random(job.seed)
    scores: list[int | None] = []  # every ply's score, White's view, for adjudication
    while True:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            return outcome.result(), outcome.termination.name.lower()
        plies = board.ply() - job.start.ply()
        if plies >= args.max_plies:
            return "1/2-1/2", "max plies"
        turn = board.turn
        nodes = args.nodes
        if nodes and args.node_jitter:  # so that games from one opening differ
            nodes = int(nodes * rng.uniform(1 - args.node_jitter, 1 + args.node_jitter))
        played = _next_move(engines[turn], specs[turn].name, board, clock, nodes, job.number, args, hung)
        if played is None:
            return LOSS[turn], "resigned"
        move, score = played.move, played.score
        scores.append(score.pov(chess.WHITE).score(mate_score=MATE_SCORE) if score else None)
        if on_move is not None:
            on_move(played)
        board.push(move)
        adjudicated = adjudicate(scores, plies + 1, resign_score=args.resign_score,
                                 resign_plies=args.resign_moves * 2, draw_score=args.draw_score,
                                 draw_plies=args.draw_moves * 2, draw_after=args.draw_after * 2)
        if adjudicated:
            return adjudicated, "adjudicated draw" if adjudicated == "1/2-1/2" else "adjudicated win"


def _next_move(engine: chess.engine.SimpleEngine, name: str, board: chess.Board, clock: Clock | None,
               nodes: int | None, game: int, args: argparse.Namespace, hung: set[chess.Color]) -> Move | None:
    """The mover's legal move, its score and its time; None if it resigned (xboard); a Forfeit on any fault."""
    turn = board.turn
    if clock is not None:
        limit = clock.limit(turn)
        wait = max(clock.left[turn], 0.0) + STALL_GRACE
    else:
        limit = chess.engine.Limit(nodes=nodes, depth=args.depth, time=args.movetime)
        wait = args.move_timeout
    t0 = time.perf_counter()
    try:
        play = _ask(engine, board, limit, game, wait, args.ponder)
    except cf.TimeoutError:
        hung.add(turn)
        raise Forfeit(turn, Fault(name, "stall", f"no move within {wait:.1f}s"), f"{name} stalled") from None
    except chess.engine.EngineTerminatedError as exc:
        raise Forfeit(turn, Fault(name, "crash", repr(exc)), f"{name} crashed") from exc
    except chess.engine.EngineError as exc:
        # python-chess could not play its move: UCI raises from the ValueError, xboard wraps it
        if isinstance(exc.__context__, ValueError) or (exc.args and isinstance(exc.args[0], ValueError)):
            raise Forfeit(turn, Fault(name, "illegal", str(exc)), f"{name} illegal move") from exc
        raise Forfeit(turn, Fault(name, "crash", repr(exc)), f"{name} crashed") from exc
    except Exception as exc:
        raise Forfeit(turn, Fault(name, "crash", repr(exc)), f"{name} crashed") from exc
    seconds = time.perf_counter() - t0
    if clock is not None and not clock.punch(turn, seconds, args.time_margin):
        raise Forfeit(turn, Fault(name, "time", f"{clock.left[turn]:.3f}s"), f"{name} lost on time")
    move = play.move
    if move is None and play.resigned:
        return None
    if move is None or move not in board.legal_moves:
        raise Forfeit(turn, Fault(name, "illegal", str(move)), f"{name} illegal move {move}")
    return Move(board.copy(stack=False), move, play.info.get("score"), seconds,
                clock.left[turn] if clock is not None else None)


def _ask(engine: chess.engine.SimpleEngine, board: chess.Board, limit: chess.engine.Limit, game: int,
         timeout: float, ponder: bool) -> chess.engine.PlayResult:
    """Ask for a move, giving up after `timeout` seconds (SimpleEngine.play waits forever on clock limits).

    With `ponder` python-chess sends `go ponder` after each move and
    `ponderhit` or `stop` when the opponent has moved.
    """
    coro = engine.protocol.play(board, limit, info=chess.engine.INFO_SCORE, game=game, ponder=ponder)
    return asyncio.run_coroutine_threadsafe(coro, engine.protocol.loop).result(timeout)


def _close(engines: dict[chess.Color, chess.engine.SimpleEngine], hung: set[chess.Color]) -> None:
    """Quit the engines that still answer, close (kill) the rest; never raise."""
    for colour, engine in engines.items():
        try:
            engine.close() if colour in hung else engine.quit()
        except Exception:
            try:
                engine.close()
            except Exception:
                pass
