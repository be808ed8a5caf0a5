"""Where a search node's machine instructions go: `bench` under valgrind, grouped by what CPython and numpy do.

    python -m tools.instructions [--depth 3]

cProfile (tools/node_profile.py) says which Python functions a node's time
goes to; this says what the interpreter does underneath: its bytecode loop,
int arithmetic (a 64-bit bitboard is a three-digit Python int, and every
`&`, `|` and `^` makes a new one), allocating and freeing objects, numpy's
calls, and BLAS's matrix-vector product (the net's second layer).  Valgrind
counts instructions (not time: a cache miss counts one) whatever else the
machine runs, so its figures hold while a match holds the cores (the match
then loses a core's share for the two minutes it takes).

Two runs, `bench DEPTH` and `bench 1`, each in a fresh interpreter under
cachegrind; the second's counts (starting Python, imports, loading the net,
the first search's lazy tables) are taken off function by function, so the
table covers the searches of the deeper bench alone.  Needs `valgrind` and
its `cg_annotate` (Debian: `apt-get install valgrind`).
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: (group, test on a function's "file:function" name), the first that matches wins.
GROUPS: list[tuple[str, re.Pattern[str]]] = [
    ("the interpreter: bytecode loop and frames", re.compile(r"ceval\.c|EvalFrame|pycore_frame\.h|/frame\.c")),
    ("int arithmetic (bitboards, scores, keys)", re.compile(r"longobject\.c|:long_|PyNumber_|PyLong")),
    ("allocating and freeing objects",
     re.compile(r"obmalloc\.c|_Py_NewReference|dealloc|_Py_Dealloc|:(_int_)?(malloc|free|calloc|realloc)$")),
    ("BLAS: matrix-vector products (the net's second layer)", re.compile(r"gemv|blas|:[ds]dot_", re.IGNORECASE)),
    ("numpy: its other calls (ufuncs, arrays)",
     re.compile(r"numpy|:(DOUBLE_|FLOAT_|LONG_|BOOL_|ufunc|PyUFunc|PyArray|array_|npy|Npy)")),
    ("dict and attribute lookups", re.compile(r"dictobject\.c|_PyType_Lookup|GetAttr")),
    ("lists and tuples", re.compile(r"listobject\.c|tupleobject\.c")),
    ("copying and clearing memory (libc)", re.compile(r"memset|memmove|memcpy")),
]
OTHER = "the rest"
_LINE = re.compile(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S.*)")
_NODES = re.compile(r"Nodes searched\s*:\s*(\d+)")


def group_of(function: str) -> str:
    """The group of one cg_annotate "file:function" name."""
    for name, pattern in GROUPS:
        if pattern.search(function):
            return name
    return OTHER


def parse(annotation: str) -> collections.Counter[str]:
    """Instructions by "file:function" from cg_annotate's per-function listing."""
    counts: collections.Counter[str] = collections.Counter()
    listing = False
    for line in annotation.splitlines():
        if "file:function" in line:
            listing = True
            continue
        match = _LINE.match(line) if listing else None
        if match:
            counts[match.group(2)] += int(match.group(1).replace(",", ""))
    return counts


def grouped(run: collections.Counter[str], baseline: collections.Counter[str]) -> collections.Counter[str]:
    """Instructions by group of `run` less `baseline`, function by function."""
    groups: collections.Counter[str] = collections.Counter()
    for function in run.keys() | baseline.keys():
        groups[group_of(function)] += run[function] - baseline[function]
    return groups


def measure(depth: int) -> tuple[int, collections.Counter[str]]:
    """(nodes, instructions by function) of `python -m uci_engine bench DEPTH` under cachegrind."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "cachegrind.out"
        command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
                   sys.executable, "-m", "uci_engine", "bench", str(depth)]
        run = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"},
                             check=True)
        nodes = _NODES.search(run.stdout + run.stderr)
        if nodes is None:
            raise RuntimeError(f"no node count in bench's output:\n{run.stdout[-2000:]}")
        annotation = subprocess.run(["cg_annotate", "--threshold=0", "--auto=no", str(out)], capture_output=True,
                                    text=True, check=True).stdout
    return int(nodes.group(1)), parse(annotation)


def table(groups: collections.Counter[str], nodes: int) -> str:
    """Markdown rows: group, instructions a node, share."""
    total = sum(groups.values())
    rows = ["| part | instructions a node | share |", "|---|---:|---:|"]
    for name, count in groups.most_common():
        rows.append(f"| {name} | {count / nodes / 1000:.1f} k | {100 * count / total:.1f}% |")
    rows.append(f"| **a node** | **{total / nodes / 1000:.1f} k** | {nodes:,} nodes |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depth", type=int, default=3, help="bench depth of the measured run (default 3)")
    args = parser.parse_args(argv)
    if args.depth < 2:
        parser.error("--depth must be at least 2: bench 1 is the baseline taken off")
    nodes, run = measure(args.depth)
    base_nodes, baseline = measure(1)
    print(f"bench {args.depth} ({nodes:,} nodes) less bench 1 ({base_nodes:,} nodes and the start):")
    print(table(grouped(run, baseline), nodes - base_nodes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
