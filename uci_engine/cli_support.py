"""Helpers shared by the analysis subcommands (`analyse`, `epd`, `annotate`).

Scores coming out of `search/` are centipawns from the side to move's point
of view, with mates encoded as `MATE - plies`.  The command line shows them in
pawns from **White's** point of view (like GUIs and PGN `[%eval]` tags):
`+1.23`, `-0.40`, `#3` (White mates in 3), `#-2` (Black mates in 2).
"""
from __future__ import annotations

import argparse
import math
import sys
import threading
from typing import TYPE_CHECKING, Callable

import chess

from search.driver import Iteration, Searcher, SearchResult
from search.timeman import Limits
from search.tt import DEFAULT_HASH_MB, MAX_HASH_MB
from search.types import EXACT, mate_in
from uci_engine.position_cmd import board_from_fen

if TYPE_CHECKING:
    from tqdm import tqdm

#: Evaluations are clipped to this many centipawns when losses and graphs are
#: computed; a mate counts as exactly this much.
EVAL_CAP = 1000


# --- scores -------------------------------------------------------------------

def white_score(score: int, turn: chess.Color) -> int:
    """A side-to-move score turned to White's point of view."""
    return score if turn == chess.WHITE else -score


def format_score(score: int, turn: chess.Color) -> str:
    """`score` (side to move `turn`) as White-view pawns: `+0.35`, `-1.20`, `#3`, `#-2`."""
    mate = mate_in(score)
    if mate is not None:
        return f"#{white_score(mate, turn)}"
    return f"{white_score(score, turn) / 100:+.2f}"


def clipped_cp(score: int) -> int:
    """A score as centipawns within ±EVAL_CAP (mates count as ±EVAL_CAP)."""
    return max(-EVAL_CAP, min(EVAL_CAP, score))


def win_chances(cp: int) -> float:
    """Expected result in [-1, 1] for an evaluation of `cp` (lichess's logistic fit)."""
    return 2 / (1 + math.exp(-0.00368208 * cp)) - 1


# --- searching for analysis -----------------------------------------------------

#: With several lines, plies searched after line 1's mate is settled, in case
#: the other lines never all arrive.
MATE_GRACE_PLIES = 4


def mate_is_settled(iteration: Iteration) -> bool:
    """A mate on line 1 searched to twice its length and more: deeper can only find a shorter one."""
    mate = iteration.mate_in
    return (iteration.multipv == 1 and iteration.bound == EXACT and mate is not None
            and iteration.depth >= 2 * abs(mate) + 2)


def analysis_search(searcher: Searcher, board: chess.Board, limits: Limits, *, multipv: int = 1,
                    on_iteration: Callable[[Iteration], None] | None = None,
                    ) -> tuple[SearchResult, list[Iteration]]:
    """Search `board` the way an analysis wants it; (result, the reports passed on).

    The driver plays games: under a clock it answers a forced move after
    depth 1 and stops early on a found mate.  For analysis a `movetime` is
    instead a stopwatch on an unbounded search, so every position gets the
    full time and a real score.  Under any limit the search is stopped once
    a mate on line 1 is settled (with K lines: once line K of that depth
    arrives, or a few plies later), or a found mate would run on to the
    maximum depth; reports arriving after that stop are dropped.
    """
    stop = threading.Event()
    timer = None
    if limits.movetime is not None:
        timer = threading.Timer(limits.movetime / 1000, stop.set)
        limits = Limits(infinite=True)
    reports: list[Iteration] = []
    settled_at: list[int] = []

    def report(iteration: Iteration) -> None:
        if stop.is_set():
            return  # the rest of a depth cut short by the stop
        reports.append(iteration)
        if not settled_at and mate_is_settled(iteration):
            settled_at.append(iteration.depth)
        if settled_at and (iteration.multipv == multipv or iteration.depth >= settled_at[0] + MATE_GRACE_PLIES):
            stop.set()
        if on_iteration is not None:
            on_iteration(iteration)

    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        result = searcher.search(board, limits, move_overhead=0, stop=stop, on_iteration=report, multipv=multipv)
    finally:
        if timer is not None:
            timer.cancel()
    return result, reports


# --- moves --------------------------------------------------------------------

def pv_san(board: chess.Board, pv: list[chess.Move]) -> str:
    """A principal variation in numbered SAN (`12... Nf6 13. e5`), stopping at any illegal move."""
    legal: list[chess.Move] = []
    probe = board.copy(stack=False)
    for move in pv:
        if not probe.is_legal(move):
            break
        legal.append(move)
        probe.push(move)
    return board.variation_san(legal) if legal else ""


# --- arguments ----------------------------------------------------------------

#: The largest --depth, --movetime and --nodes (`go` clamps its values to the same).
MAX_LIMIT = 1_000_000_000


def positive_int(text: str, maximum: int = MAX_LIMIT) -> int:
    """argparse `type=` for a whole number from 1 to `maximum`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    if value > maximum:
        raise argparse.ArgumentTypeError(f"expected at most {maximum}, got {text!r}")
    return value


def hash_mb(text: str) -> int:
    """argparse `type=` for --hash: 1 to MAX_HASH_MB."""
    return positive_int(text, MAX_HASH_MB)


def fen_board(text: str) -> chess.Board:
    """argparse `type=` for a FEN: a valid board, or a parser error (exit status 2)."""
    result = board_from_fen(text)
    if isinstance(result, str):
        raise argparse.ArgumentTypeError(result)
    board, fixes = result
    for fix in fixes:
        print(f"note: {fix}", file=sys.stderr)
    return board


def add_limit_options(parser: argparse.ArgumentParser, default: str, *, hash_option: bool = True) -> None:
    """--depth / --movetime / --nodes (one of them) and --hash; `default` describes the fallback."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--depth", type=positive_int, metavar="N", help="search N plies")
    group.add_argument("--movetime", type=positive_int, metavar="MS",
                       help=f"search MS milliseconds (without any limit option: {default})")
    group.add_argument("--nodes", type=positive_int, metavar="N", help="search about N nodes")
    if hash_option:
        parser.add_argument("--hash", type=hash_mb, default=DEFAULT_HASH_MB, metavar="MB",
                            help=f"transposition table size in MB (default: {DEFAULT_HASH_MB})")


def limits_from(args: argparse.Namespace, default: Limits) -> Limits:
    """The limits asked for on the command line, or `default` if none was."""
    if args.depth is not None:
        return Limits(depth=args.depth)
    if args.movetime is not None:
        return Limits(movetime=args.movetime)
    if args.nodes is not None:
        return Limits(nodes=args.nodes)
    return default


def describe_limits(limits: Limits) -> str:
    if limits.depth is not None:
        return f"depth {limits.depth}"
    if limits.nodes is not None:
        return f"{limits.nodes} nodes"
    if limits.movetime is not None:
        return f"{limits.movetime} ms"
    return "no limit"


# --- progress -----------------------------------------------------------------

def progress_bar(total: int, label: str, enabled: bool | None = None) -> tqdm:
    """A tqdm bar on stderr counting `total` positions.

    `enabled` None (the commands' default) draws it only when stderr is a
    terminal, so logs and pipes stay clean; True forces it, False hides it.
    Lines printed while it runs go through `tqdm.write`, which lifts the bar
    out of their way.
    """
    from tqdm import tqdm  # imported here: the UCI engine never draws a bar

    return tqdm(total=total, desc=label, unit="pos", file=sys.stderr,
                disable=None if enabled is None else not enabled)
