"""tools/bench_compare.py: each tree's own code is searched, interleaved, and differing trees are flagged."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from eval.nnue import default_net
from tools import bench_compare
from uci_engine.diagnostics import bench

ROOT = Path(__file__).resolve().parent.parent


def test_probe_runs_the_trees_own_bench() -> None:
    nodes, seconds = bench_compare.probe(ROOT, 1, 1)
    assert nodes == bench(1, emit=lambda line: None, net=default_net())[0]
    assert seconds > 0


def test_two_trees_interleaved_and_a_changed_search_is_flagged(tmp_path: Path, capsys) -> None:
    other = tmp_path / "other"
    for package in ("search", "eval", "uci_engine", "opening_book"):
        shutil.copytree(ROOT / package, other / package, ignore=shutil.ignore_patterns("__pycache__"))
    alphabeta = other / "search" / "alphabeta.py"
    alphabeta.write_text(alphabeta.read_text().replace("DELTA_MARGIN = 200", "DELTA_MARGIN = 20"))
    assert bench_compare.main([str(ROOT), str(other), "--depth", "2", "--rounds", "2", "--repeat", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[:4]] == ["round 1", "round 1", "round 2", "round 2"]
    assert lines[0].split(": ")[1] == str(ROOT) and lines[1].split(": ")[1] == str(other)
    assert lines[4].startswith(f"{ROOT}: bench 2:") and "+0.0% against" in lines[4]
    assert lines[5].startswith(f"{other}: bench 2:")
    assert lines[6].startswith("node counts differ")


def test_every_tree_runs_with_every_interpreter_asked_for(tmp_path: Path, capsys) -> None:
    wrapper = tmp_path / "python-wrapper"  # a second name for this interpreter
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    assert bench_compare.main([str(ROOT), "--depth", "1", "--rounds", "1", "--repeat", "1",
                               "--python", sys.executable, "--python", str(wrapper)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"round 1: {ROOT} ({sys.executable}): ")
    assert lines[1].startswith(f"round 1: {ROOT} ({wrapper}): ")
    assert lines[3].startswith(f"{ROOT} ({wrapper}): bench 1:") and f"against {ROOT} ({sys.executable})" in lines[3]
    assert len(lines) == 4  # the same code: the same node count, nothing flagged
