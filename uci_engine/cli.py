"""Command-line entry point: the UCI loop by default, tools as subcommands.

    pawnstorm                 UCI mode (what GUIs start)
    pawnstorm bench [DEPTH] [--syzygy PATH] [--threads N]   fixed-depth search over the bench positions
    pawnstorm perft N [--fen FEN]
    pawnstorm analyse --fen FEN [--depth N | --movetime MS | --nodes N] [--multipv K]
    pawnstorm epd FILE [--depth N | --movetime MS | --nodes N]
    pawnstorm annotate GAME.pgn [--movetime MS ...] [-o OUT.pgn] [--graph EVAL.png]

Each analysis subcommand lives in its own module (`analyse`, `epd`,
`annotate`), which registers its parser and handler here.
"""
from __future__ import annotations

import argparse
import errno
import os
import sys

import chess

from eval.nnue import default_net
from uci_engine import analyse, annotate, epd
from uci_engine.cli_support import fen_board, positive_int
from uci_engine.protocol import UciEngine
from search.smp import MAX_THREADS
from search.tablebase import Tablebases
from uci_engine.diagnostics import DEFAULT_BENCH_DEPTH, bench, divide
from uci_engine.options import search_features


def _bench_tablebases(paths: str) -> Tablebases | None:
    """The tables `bench --syzygy` searches with, after saying what was found; None for none."""
    if not paths:
        return None
    tablebases = Tablebases()
    for message in tablebases.set_syzygy_path(paths):
        print(message)
    return tablebases if tablebases.max_pieces else None


#: The errors of a write to an output that cannot take more.
_OUTPUT_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def thread_count(text: str) -> int:
    """argparse `type=` for --threads: 1 to MAX_THREADS, the UCI option's range."""
    return positive_int(text, MAX_THREADS)


def entry_point() -> int:
    """The program itself (`pawnstorm`, `python -m uci_engine`, the executable).

    A GUI (or a `| head`) that goes away must end us quietly, without a traceback.
    SIGPIPE stays ignored (Python's default) rather than restored to its default
    action: that action would kill the whole engine whenever the main process
    writes to the pipe of a Lazy SMP helper that has just died, before
    `search.smp` can report the helper and search on.  A broken stdout instead
    surfaces as `BrokenPipeError`: the UCI loop stops its search and serving
    when its output closes, and a subcommand ends here.  Either way the status
    is 1 and nothing reaches stderr.
    """
    try:
        status = main()
    except BrokenPipeError:  # a subcommand's reader left before its report ended
        _flush_stdout()
        return 1
    except OSError as error:  # stdout cannot take more (a full disk, a device gone)
        if error.filename is not None or error.errno not in _OUTPUT_FULL:
            raise  # not the output's problem: a defect to see
        print(f"pawnstorm: cannot write the output: {error.strerror or error}", file=sys.stderr)
        _silence_stdout()
        return 1
    except SystemExit:  # argparse's --help and usage errors end this way
        if not _flush_stdout():
            return 1
        raise
    return status if _flush_stdout() else 1


def _flush_stdout() -> bool:
    """Deliver what stdout still buffers; False (and stdout silenced) when its reader is gone."""
    try:
        sys.stdout.flush()
        return True
    except BrokenPipeError:
        _silence_stdout()
        return False


def _silence_stdout() -> None:
    """Point stdout's file descriptor at the null device, so that the interpreter's own last flush finds nothing to complain about."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the UCI loop or the subcommand in `argv` (default: the command line)."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        return _serve()

    parser = argparse.ArgumentParser(prog="pawnstorm", description="Pawnstorm chess engine (UCI).")
    commands = parser.add_subparsers(dest="command", required=True)
    bench_cmd = commands.add_parser("bench", help="search the bench positions to a fixed depth")
    bench_cmd.add_argument("depth", nargs="?", type=positive_int, default=DEFAULT_BENCH_DEPTH)
    bench_cmd.add_argument("--syzygy", metavar="PATH", default="",
                           help="search with the Syzygy tables in PATH (folders joined by the OS path separator)")
    bench_cmd.add_argument("--threads", type=thread_count, default=1,
                           help="processes searching each position (Lazy SMP); the time is then the time to depth")
    perft_cmd = commands.add_parser("perft", help="count leaf nodes of the move tree")
    perft_cmd.add_argument("depth", type=positive_int)
    perft_cmd.add_argument("--fen", type=fen_board, default=chess.STARTING_FEN)
    analyse.register(commands)
    epd.register(commands)
    annotate.register(commands)
    commands.add_parser("uci", help="run the UCI loop (the default)")
    args = parser.parse_args(argv)

    try:
        return _run(args)
    except KeyboardInterrupt:
        print(f"\n{args.command}: interrupted", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace) -> int:
    """The subcommand `args` names."""
    handler = getattr(args, "handler", None)
    if handler is not None:
        return handler(args)
    if args.command == "bench":
        features, problems = search_features()
        for problem in problems:
            print(f"bench: {problem}", file=sys.stderr)
        bench(args.depth, net=default_net(), tablebases=_bench_tablebases(args.syzygy), threads=args.threads,
              features=features)
    elif args.command == "perft":
        divide(args.fen, args.depth)
    else:
        return _serve()
    return 0


def _serve() -> int:
    """The UCI loop; status 1 when it ended because the GUI stopped reading our output."""
    engine = UciEngine()
    engine.run()
    return 1 if engine.out.closed else 0
