"""Which engine tree searches faster?  `bench` in each, interleaved, the best of several runs.

A speed change that keeps the search's tree must show the same `bench`
node count and more nodes a second.  One `bench` run on a shared virtual
machine varies by 20-30% from run to run (sessions 48-49 saw 23k-35k nps
for one tree within minutes), so a single before-and-after pair proves
nothing.  This script runs `bench` in every tree in turn, `--rounds` times,
each time in a fresh interpreter that times `--repeat` searches of the
bench positions and keeps the fastest; the fastest run of each tree is the
one the machine disturbed least (timeit's advice), and interleaving gives
each tree the same share of the machine's good and bad minutes.

    python -m tools.bench_compare OLD_TREE NEW_TREE [--depth 4] [--rounds 3] [--repeat 3]
    python -m tools.bench_compare TREE --python PY1 --python PY2

A tree is a checkout (`git worktree add --detach /tmp/old HEAD~1`); each is
searched with its own code and its own bundled net, with the interpreter
running this script, or with each `--python` in turn (every tree with every
interpreter: how the interpreter's build changes a node's cost, the code
the same).  An interpreter needs the engine's dependencies (a virtualenv's
`bin/python`).  Nothing else heavy should run meanwhile.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

#: Run inside each tree (`python -c` puts the working directory first on the path, so the
#: tree's own packages load): prints "nodes seconds", the fastest of `repeat` bench runs.
_PROBE = """
from eval.nnue import default_net
from uci_engine.diagnostics import bench
net = default_net()
best = None
for _ in range({repeat}):
    nodes, seconds = bench({depth}, net=net, emit=lambda line: None)
    best = seconds if best is None else min(best, seconds)
print(nodes, best)
"""


def probe(tree: Path, depth: int, repeat: int, python: str = sys.executable) -> tuple[int, float]:
    """(nodes, fastest seconds) of `repeat` bench runs at `depth` in `tree`, run by the interpreter `python`."""
    done = subprocess.run([python, "-c", _PROBE.format(depth=depth, repeat=repeat)], cwd=tree,
                          capture_output=True, text=True, check=True)
    nodes, seconds = done.stdout.split()[-2:]
    return int(nodes), float(seconds)


def _entry_name(entry: tuple[Path, str]) -> str:
    """A tree and the interpreter that runs it, as the report names them."""
    return f"{entry[0]} ({entry[1]})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path, help="checkouts of the engine, the first is the reference")
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds over the trees")
    parser.add_argument("--repeat", type=int, default=3, help="bench runs per interpreter (the fastest counts)")
    parser.add_argument("--python", action="append", metavar="PY",
                        help="an interpreter to run every tree with (repeatable; default: this script's)")
    args = parser.parse_args(argv)
    pythons = args.python or [sys.executable]
    # Each entry is a tree, or with several interpreters a tree and an interpreter.
    entries = [(tree, python) for tree in args.trees for python in pythons]
    name = _entry_name if len(pythons) > 1 else (lambda entry: str(entry[0]))
    fastest: dict[tuple[Path, str], float] = {}
    nodes: dict[tuple[Path, str], int] = {}
    for round_ in range(1, args.rounds + 1):
        for entry in entries:
            count, seconds = probe(entry[0], args.depth, args.repeat, entry[1])
            nodes[entry] = count
            fastest[entry] = min(seconds, fastest.get(entry, seconds))
            print(f"round {round_}: {name(entry)}: {count} nodes in {seconds:.3f} s ({count / seconds:,.0f} nps)",
                  flush=True)
    reference = entries[0]
    for entry in entries:
        ratio = (nodes[entry] / fastest[entry]) / (nodes[reference] / fastest[reference])
        print(f"{name(entry)}: bench {args.depth}: {nodes[entry]} nodes, fastest {fastest[entry]:.3f} s, "
              f"{nodes[entry] / fastest[entry]:,.0f} nps ({ratio - 1:+.1%} against {name(reference)})")
    if len(set(nodes.values())) > 1:
        print("node counts differ: the trees search different trees, so nps alone does not compare them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
