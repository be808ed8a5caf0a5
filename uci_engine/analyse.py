"""`pawnstorm analyse`: search one position and print the lines in SAN.

    pawnstorm analyse --fen FEN [--depth N | --movetime MS | --nodes N] [--multipv K]

Every report of the search is printed as it arrives (depth, score, nodes,
time, line); the final lines — the deepest depth for which every line was
completed — follow at the end.  Scores are pawns from White's point of view.
"""
from __future__ import annotations

import argparse
import sys

import chess

from eval.nnue import default_net
from search.driver import Iteration, Searcher
from search.timeman import Limits
from search.types import EXACT, LOWER
from uci_engine.cli_support import (add_limit_options, analysis_search, describe_limits, fen_board,
                                    format_score, limits_from, positive_int, pv_san)

DEFAULT_LIMITS = Limits(movetime=2000)


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "analyse", aliases=["analyze"],
        help="analyse a position and print the best lines in SAN",
        description="Search a position and print the principal variations in SAN. "
                    "Scores are in pawns from White's point of view; #N: White mates in N, "
                    "#-N: Black mates in N.")
    parser.add_argument("--fen", type=fen_board, default=chess.Board(), metavar="FEN",
                        help="position to analyse (default: the starting position)")
    add_limit_options(parser, default=describe_limits(DEFAULT_LIMITS))
    parser.add_argument("--multipv", type=positive_int, default=1, metavar="K",
                        help="show the K best lines (default: 1)")
    parser.set_defaults(handler=run)


def bound_text(iteration: Iteration, turn: chess.Color) -> str:
    """' (lower bound)' / ' (upper bound)' from White's point of view, or ''."""
    if iteration.bound == EXACT:
        return ""
    white_lower = (iteration.bound == LOWER) == (turn == chess.WHITE)
    return " (lower bound)" if white_lower else " (upper bound)"


def final_lines(reports: list[Iteration], wanted: int) -> list[Iteration]:
    """The last complete set of lines: the deepest depth with lines 1..wanted all exact.

    Failing a complete set (fewer lines reported), the deepest depth with an
    exact line 1 is used, with whatever lines it has.  A depth cut short after
    proving a *different* first move (`partial`, a lower bound) replaces line 1.
    """
    by_depth: dict[int, dict[int, Iteration]] = {}
    for report in reports:
        if report.bound == EXACT:
            by_depth.setdefault(report.depth, {})[report.multipv] = report
    lines: list[Iteration] = []
    for depth in sorted(by_depth, reverse=True):
        found = by_depth[depth]
        if all(index in found for index in range(1, wanted + 1)):
            lines = [found[index] for index in range(1, wanted + 1)]
            break
    else:
        for depth in sorted(by_depth, reverse=True):
            if 1 in by_depth[depth]:
                lines = [by_depth[depth][index] for index in sorted(by_depth[depth])]
                break
    partial = reports[-1] if reports and reports[-1].partial and reports[-1].pv else None
    if partial is not None and (not lines or (partial.depth > lines[0].depth and partial.pv[0] != lines[0].pv[0])):
        lines = [partial] + [line for line in lines if line.pv and line.pv[0] != partial.pv[0]]
    return lines[:wanted]


def run(args: argparse.Namespace) -> int:
    board: chess.Board = args.fen
    limits = limits_from(args, DEFAULT_LIMITS)
    out = sys.stdout
    side = "White" if board.turn == chess.WHITE else "Black"
    print(f"Position: {board.fen()}", file=out)
    if board.is_game_over(claim_draw=False):
        outcome = board.outcome()
        reason = outcome.termination.name.lower().replace("_", " ") if outcome else "game over"
        print(f"No moves to analyse: {reason}.", file=out)
        return 0
    legal = board.legal_moves.count()
    wanted = min(args.multipv, legal)
    print(f"{side} to move; {describe_limits(limits)}, {wanted} line{'s' if wanted > 1 else ''}; "
          "scores in pawns from White's point of view (#N: White mates in N, #-N: Black mates in N)",
          file=out)

    def show(iteration: Iteration) -> None:
        print(f"depth {iteration.depth:2d}/{max(iteration.seldepth, iteration.depth):<2d} "
              f"line {iteration.multipv}  {format_score(iteration.score, board.turn):>7s}"
              f"{bound_text(iteration, board.turn)}  nodes {iteration.nodes:>9d}  "
              f"time {iteration.time_ms / 1000:6.2f}s  {pv_san(board, iteration.pv)}", file=out, flush=True)

    result, reports = analysis_search(Searcher(args.hash, net=default_net()), board, limits, multipv=wanted, on_iteration=show)
    lines = final_lines(reports, wanted)
    print("", file=out)
    print(f"Final (depth {lines[0].depth if lines else 0}, {result.nodes} nodes, "
          f"{result.time_ms / 1000:.2f}s):", file=out)
    for number, iteration in enumerate(lines, 1):
        print(f"{number:2d}. {format_score(iteration.score, board.turn):>7s}"
              f"{bound_text(iteration, board.turn)}  {pv_san(board, iteration.pv)}", file=out)
    if not lines:
        print("    (no depth completed within the limit)", file=out)
    if result.best_move is not None:
        print(f"Best move: {board.san(result.best_move)}", file=out)
    return 0
