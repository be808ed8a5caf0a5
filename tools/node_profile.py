"""Where a search node's time goes: `bench`, or a game on the clock, under cProfile, in microseconds a node by part.

    python -m tools.node_profile [--depth 5]
    python -m tools.node_profile --game 10+0.1 [--plies 120]

Runs the work once unprofiled (the node cost, µs a node) and once under
cProfile, files each function's own time (tottime) under one part of a node
(make/unmake, move generation, ordering and SEE, the net, checks, the table,
the search's own nodes) and prints a Markdown table: each part's share of the
profiled time, and that share of the unprofiled cost.  cProfile charges every
call, so parts made of many small calls (make/unmake, ordering) read larger
than they are; compare rows of one run, and a run before a change with one
after it.  docs/speed.md keeps the figures.

The work is `bench` (fixed depth, middlegames mostly), or with --game the
engine playing itself from the initial position on a clock (each side its
own searcher, table and ordering kept from move to move, as in a match),
up to --plies half-moves: the searches a game at that time control makes,
openings through endgames, with the time manager deciding each move's
depth.  A game on the clock is not repeatable, so the profiled game and the
unprofiled one differ; their node mixes are alike.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from typing import Callable

import chess

from eval.nnue import Net, default_net
from search.driver import Searcher
from search.timeman import Limits
from tools.common import parse_tc
from uci_engine.diagnostics import DEFAULT_BENCH_DEPTH, bench

_CHESS = "chess/__init__.py"


def _in(path: str, *suffixes: str) -> bool:
    return path.endswith(suffixes)


#: Each part of a node and the test (file, function name) -> belongs to it; the first that matches wins.
PARTS: list[tuple[str, Callable[[str, str], bool]]] = [
    ("make/unmake (Position.push/pop, search/boardpush.py, python-chess's push/pop)",
     lambda f, n: _in(f, "search/boardpush.py") or (_in(f, "search/position.py") and n in (
         "push", "pop", "push_null", "_ep_key", "castling_key", "_castling_squares"))
     or (_in(f, _CHESS) and n in ("restore", "pop", "push", "is_castling", "__init__", "_board_state",
                                  "clean_castling_rights", "_push_capture"))),
    ("ordering and SEE (search/ordering.py, search/see.py, attack masks)",
     lambda f, n: _in(f, "search/ordering.py", "search/see.py") or n in (
         "attackers_mask", "_attackers_mask", "piece_type_at", "<method 'sort' of 'list' objects>")),
    ("move generation (search/movegen.py, search/movepick.py, python-chess's generators)",
     lambda f, n: _in(f, "search/movegen.py", "search/movepick.py") or n.startswith("generate_")
     or n in ("tactical_moves", "legal_moves")),
    ("the net: accumulator update and head (eval/accumulator.py, eval/nnue*.py, numpy)",
     lambda f, n: _in(f, "eval/accumulator.py", "eval/nnue.py", "eval/nnue_layers.py")
     or n == "<method 'dot' of 'numpy.ndarray' objects>"),
    ("check detection (Position.in_check, search/checks.py, python-chess's is_check)",
     lambda f, n: _in(f, "search/checks.py") or (_in(f, "search/position.py") and n in (
         "in_check", "gives_check", "quiet_check_test")) or n in ("is_check", "checkers_mask", "gives_check")),
    ("transposition table (search/tt.py)", lambda f, n: _in(f, "search/tt.py", "search/shared_tt.py")),
    ("the search's own nodes (alphabeta, quiescence, draws, the evaluation cache)",
     lambda f, n: _in(f, "search/alphabeta.py") or (_in(f, "search/position.py") and n in (
         "is_draw", "evaluate", "no_moves_score"))),
]
OTHER = "everything else (builtins, list appends, small helpers)"


def self_play(tc: str, plies: int, net: Net | None) -> int:
    """Nodes searched by the engine playing itself on clock `tc` (BASE+INC) for at most `plies` half-moves."""
    base, increment, _ = parse_tc(tc)
    board = chess.Board()
    searchers = {colour: Searcher(net=net) for colour in chess.COLORS}
    left = {colour: base for colour in chess.COLORS}
    nodes = 0
    while not board.is_game_over(claim_draw=True) and len(board.move_stack) < plies:
        turn = board.turn
        limits = Limits(wtime=int(left[chess.WHITE] * 1000), btime=int(left[chess.BLACK] * 1000),
                        winc=int(increment * 1000), binc=int(increment * 1000))
        started = time.perf_counter()
        result = searchers[turn].search(board, limits)
        left[turn] += increment - (time.perf_counter() - started)
        nodes += result.nodes
        board.push(result.best_move)
    return nodes


def profile(depth: int, game: str | None = None, plies: int = 120) -> tuple[int, float, dict[str, float]]:
    """(nodes, µs a node unprofiled, each part's share of the profiled time, OTHER included)."""
    net = default_net()

    def work() -> int:
        return self_play(game, plies, net) if game else bench(depth, net=net, emit=lambda line: None)[0]

    started = time.perf_counter()
    nodes = work()
    micros = (time.perf_counter() - started) / max(nodes, 1) * 1e6
    profiler = cProfile.Profile()
    profiler.enable()
    work()
    profiler.disable()
    totals = {name: 0.0 for name, _ in PARTS} | {OTHER: 0.0}
    for (path, _, function), (_, _, own, _, _) in pstats.Stats(profiler).stats.items():  # type: ignore[attr-defined]
        part = next((name for name, belongs in PARTS if belongs(path, function)), OTHER)
        totals[part] += own
    whole = sum(totals.values()) or 1.0
    return nodes, micros, {name: seconds / whole for name, seconds in totals.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=DEFAULT_BENCH_DEPTH, help="bench depth")
    parser.add_argument("--game", metavar="TC", help="profile a self-play game on this clock (BASE+INC, e.g. 10+0.1)")
    parser.add_argument("--plies", type=int, default=120, help="the game's half-moves at most (with --game)")
    args = parser.parse_args(argv)
    nodes, micros, shares = profile(args.depth, args.game, args.plies)
    work = f"a {args.game} self-play game ({args.plies} plies at most)" if args.game else f"bench {args.depth}"
    print(f"{work}: {nodes} nodes unprofiled, {micros:.2f} µs a node")
    print("| part of a node | share of the profile | µs a node |")
    print("|---|---:|---:|")
    for name, share in sorted(shares.items(), key=lambda item: -item[1]):
        print(f"| {name} | {share * 100:.1f}% | {share * micros:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
