"""`pawnstorm epd`: run a test suite of EPD positions with `bm` / `am` operations.

    pawnstorm epd FILE [--depth N | --movetime MS | --nodes N]

A position is solved when the engine's move is one of the `bm` (best move)
moves and none of the `am` (avoid move) moves.  Failures are printed as they
happen, a progress bar is drawn on stderr (when it is a terminal, or with
--progress), and `solved N/M` ends the output.  Lines that cannot be parsed,
or that have neither `bm` nor `am` naming legal moves, are reported and not
counted.  The exit status is 0 whatever the score; 1 if FILE holds no
position to search; 2 if it cannot be read.

The suite's reading and scoring (`read_suite`, `solved`, `wanted`) are the
project's one implementation: `tools.suite`, which puts any UCI engine
through a suite, uses them too, so both count a position alike.
"""
from __future__ import annotations

import argparse
import sys
import time

import chess

from eval.nnue import default_net
from search.driver import Searcher
from search.timeman import Limits
from uci_engine.cli_support import (add_limit_options, analysis_search, describe_limits, format_score, limits_from,
                                    progress_bar)

DEFAULT_LIMITS = Limits(movetime=1000)


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "epd", help="run a bm/am EPD test suite and report the solved count",
        description="Search every position of an EPD suite and check the move against its bm/am operations.")
    parser.add_argument("file", metavar="FILE", help="EPD file, one position per line")
    add_limit_options(parser, default=f"{describe_limits(DEFAULT_LIMITS)} per position")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="draw a progress bar on stderr (default: only on a terminal)")
    parser.set_defaults(handler=run, parser=parser)


def san_list(board: chess.Board, moves: list[chess.Move]) -> str:
    return " ".join(board.san(move) for move in moves)


def solved(move: chess.Move | None, ops: dict) -> bool:
    """Whether `move` is one of the `bm` moves (if any) and none of the `am` moves."""
    return move is not None and ("bm" not in ops or move in ops["bm"]) and ("am" not in ops or move not in ops["am"])


def wanted(board: chess.Board, ops: dict) -> str:
    """What the position asks for, in SAN: "bm Qg6", "am Rxb2", or both."""
    parts = []
    if "bm" in ops:
        parts.append(f"bm {san_list(board, ops['bm'])}")
    if "am" in ops:
        parts.append(f"am {san_list(board, ops['am'])}")
    return "; ".join(parts)


def read_suite(lines: list[str]) -> tuple[list[tuple[int, chess.Board, dict]], list[str]]:
    """Parse EPD lines → ([(line number, board, operations)], [problems])."""
    entries = []
    problems = []
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            board, ops = chess.Board.from_epd(text)
        except ValueError as error:
            problems.append(f"line {number}: skipped, cannot parse EPD ({error})")
            continue
        if "bm" not in ops and "am" not in ops:
            problems.append(f"line {number}: skipped, no bm or am operation")
            continue
        malformed = [name for name in ("bm", "am") if name in ops and not _names_moves(ops[name])]
        if malformed:
            problems.append(f"line {number}: skipped, {' and '.join(malformed)} must name moves")
            continue
        if not board.is_valid() or board.is_game_over():
            problems.append(f"line {number}: skipped, no position to search")
            continue
        entries.append((number, board, ops))
    return entries, problems


def _names_moves(operand: object) -> bool:
    """Whether an EPD operand is a non-empty list of moves (python-chess reads `bm "e4"` as a string, `bm;` as [])."""
    return isinstance(operand, list) and bool(operand) and all(isinstance(move, chess.Move) for move in operand)


def run(args: argparse.Namespace) -> int:
    try:
        with open(args.file, encoding="utf-8-sig") as handle:  # (a byte-order mark is not part of the first FEN)
            lines = handle.read().splitlines()
    except OSError as error:
        args.parser.error(f"cannot read {args.file}: {error.strerror or error}")
    except UnicodeDecodeError as error:
        args.parser.error(f"cannot read {args.file}: not UTF-8 text ({error.reason})")

    limits = limits_from(args, DEFAULT_LIMITS)
    entries, problems = read_suite(lines)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not entries:
        print(f"epd: no position to search in {args.file}", file=sys.stderr)
        return 1
    print(f"{args.file}: {len(entries)} positions, {describe_limits(limits)} each", flush=True)

    searcher = Searcher(args.hash, net=default_net())
    bar = progress_bar(len(entries), "epd", enabled=args.progress)
    count = 0
    total_nodes = 0
    start = time.perf_counter()
    for number, board, ops in entries:
        searcher.clear()  # each position on its own: results don't depend on the order
        result, _ = analysis_search(searcher, board, limits)
        total_nodes += result.nodes
        move = result.best_move
        if solved(move, ops):
            count += 1
        else:
            name = ops.get("id") or f"line {number}"
            played = board.san(move) if move is not None else "(none)"
            with bar.external_write_mode(file=sys.stdout):  # the bar steps aside for the line
                print(f"FAIL {name}: played {played} ({format_score(result.score, board.turn)}, "
                      f"depth {result.depth}), wanted {wanted(board, ops)}  [{board.fen()}]", flush=True)
        bar.set_postfix_str(f"solved {count}", refresh=False)
        bar.update()
    bar.close()
    elapsed = time.perf_counter() - start
    percent = 100 * count / len(entries) if entries else 0.0
    print(f"solved {count}/{len(entries)} ({percent:.1f}%) in {elapsed:.1f}s, {total_nodes} nodes")
    return 0
