"""Where a search node's time goes: `bench` under cProfile, in microseconds a node by part of the engine.

    python -m tools.node_profile [--depth 5]

Runs `bench` once unprofiled (the node cost, µs a node) and once under
cProfile, files each function's own time (tottime) under one part of a node
(make/unmake, move generation, ordering and SEE, the net, checks, the table,
the search's own nodes) and prints a Markdown table: each part's share of the
profiled time, and that share of the unprofiled cost.  cProfile charges every
call, so parts made of many small calls (make/unmake, ordering) read larger
than they are; compare rows of one run, and a run before a change with one
after it.  docs/speed.md keeps the figures.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from typing import Callable

from eval.nnue import default_net
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


def profile(depth: int) -> tuple[int, float, dict[str, float]]:
    """(nodes, µs a node unprofiled, each part's share of the profiled time, OTHER included)."""
    net = default_net()
    started = time.perf_counter()
    nodes, _ = bench(depth, net=net, emit=lambda line: None)
    micros = (time.perf_counter() - started) / nodes * 1e6
    profiler = cProfile.Profile()
    profiler.enable()
    bench(depth, net=net, emit=lambda line: None)
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
    args = parser.parse_args(argv)
    nodes, micros, shares = profile(args.depth)
    print(f"bench {args.depth}: {nodes} nodes, {micros:.2f} µs a node unprofiled")
    print("| part of a node | share of the profile | µs a node |")
    print("|---|---:|---:|")
    for name, share in sorted(shares.items(), key=lambda item: -item[1]):
        print(f"| {name} | {share * 100:.1f}% | {share * micros:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
