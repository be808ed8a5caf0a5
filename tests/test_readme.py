"""README's checked examples print what the engine prints.

A fenced block in README.md that follows the line `<!-- checked by tests/test_readme.py -->`
is a terminal session: lines starting `$ ` are commands, the lines after each are
its output (stdout and stderr together, as a terminal shows them).  Each command
runs through bash in a scratch folder that sees the repository's `data/`, with
`pawnstorm` meaning this tree's `python -m uci_engine`, so a change to the search
or the evaluation that changes a printed line fails here until README shows the
new line.  Only deterministic limits belong in such blocks (`--depth`, `--nodes`);
the seconds a search took are the one thing compared loosely.

README's option table and its lichess-bot block are checked against the
options the engine declares at `uci`, so neither names an option the engine
lacks or a value it would clamp.
"""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from uci_engine.output import Output
from uci_engine.protocol import UciEngine

REPO_ROOT = Path(__file__).resolve().parent.parent
README = REPO_ROOT / "README.md"
MARKER = "<!-- checked by tests/test_readme.py -->"
#: Hang guard for one command (each takes a few seconds).
COMMAND_GUARD = 120.0
#: A duration such as `0.33s` or `(1.8s`: the one thing that varies from run to run.
SECONDS = re.compile(r" *\b\d+\.\d+s\b")


def checked_sessions(text: str) -> list[list[tuple[str, list[str]]]]:
    """The marked blocks, each as its (command, expected output lines) in order."""
    sessions = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        opening = lines[index + 1]
        assert opening.startswith("```"), f"README line {index + 2}: a fenced block must follow the marker"
        block: list[str] = []
        for body in lines[index + 2:]:
            if body.startswith("```"):
                break
            block.append(body)
        steps: list[tuple[str, list[str]]] = []
        for body in block:
            if body.startswith("$ "):
                steps.append((body[2:], []))
            else:
                assert steps, f"README line {index + 3}: a checked block starts with a `$ ` command"
                steps[-1][1].append(body)
        sessions.append(steps)
    return sessions


SESSIONS = checked_sessions(README.read_text(encoding="utf-8"))


def loosen(line: str) -> str:
    return SECONDS.sub(" <seconds>", line.rstrip())


def run_session(steps: list[tuple[str, list[str]]], folder: Path) -> list[tuple[str, list[str], list[str]]]:
    """Run each command in `folder`; (command, expected, printed) for each."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "pawnstorm"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m uci_engine "$@"\n')
    shim.chmod(0o755)
    (folder / "data").symlink_to(REPO_ROOT / "data")
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + old if old else "")
    results = []
    for command, expected in steps:
        done = subprocess.run(["bash", "-c", command], cwd=folder, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=COMMAND_GUARD)
        assert done.returncode == 0, f"`{command}` exited {done.returncode}:\n{done.stdout}"
        results.append((command, expected, done.stdout.splitlines()))
    return results


def test_readme_has_checked_examples() -> None:
    """The check below cannot pass by finding nothing: README keeps its analyse, epd and annotate examples."""
    commands = [command for steps in SESSIONS for command, _ in steps]
    for needed in ("pawnstorm analyse", "pawnstorm epd", "pawnstorm annotate"):
        assert any(command.startswith(needed) for command in commands), (needed, commands)


@pytest.mark.parametrize("steps", SESSIONS, ids=[steps[-1][0].split(" --")[0][:40] for steps in SESSIONS])
def test_readme_example_prints_what_the_engine_prints(steps, tmp_path: Path) -> None:
    for command, expected, printed in run_session(steps, tmp_path):
        assert [loosen(line) for line in printed] == [loosen(line) for line in expected], (
            f"README's example `{command}` no longer matches; the engine now prints:\n" + "\n".join(printed))


def test_loosen_ignores_only_the_seconds() -> None:
    assert loosen("depth  5/8  line 1    +0.31  nodes      4266  time   0.33s  3...Nf6") == \
        loosen("depth  5/8  line 1    +0.31  nodes      4266  time  12.07s  3...Nf6")
    assert loosen("solved 9/10 (90.0%) in 2.4s, 39232 nodes") != loosen("solved 9/10 (90.0%) in 2.4s, 39233 nodes")
    assert loosen("depth 5 +0.31") != loosen("depth 5 +0.32")


# --- the options README names are the engine's --------------------------------------------------

#: `option name Hash type spin default 16 min 1 max 1024`
DECLARATION = re.compile(r"option name (.+?) type (\w+)(?: default (.*?))?(?: min (-?\d+) max (-?\d+))?$")
#: A row of README's option table: | `Hash` | spin | 16 (1–1024) | ... |
TABLE_ROW = re.compile(r"^\| `([^`]+)`\s*\| (\w+)\s*\| ([^|]*?)\s*\|")


def engine_options() -> dict[str, tuple[str, str, str | None]]:
    """name -> (type, default, "min–max" or None), from the engine's own `uci` answer."""
    stream = io.StringIO()
    engine = UciEngine(Output(stream))
    try:
        engine.handle("uci")
    finally:
        engine.searcher.close()
    options = {}
    for line in stream.getvalue().splitlines():
        match = DECLARATION.match(line)
        if match:
            name, kind, default, low, high = match.groups()
            options[name] = (kind, default or "", f"{low}–{high}" if low is not None else None)
    return options


def readme_table() -> dict[str, tuple[str, str, str | None]]:
    rows = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        match = TABLE_ROW.match(line)
        if match:
            name, kind, default = match.groups()
            spin = re.fullmatch(r"(-?\d+) \((-?\d+)–(-?\d+)\)", default)
            if spin:
                rows[name] = (kind, spin[1], f"{spin[2]}–{spin[3]}")
            else:
                rows[name] = (kind, default.strip("`"), None)
    return rows


def test_readme_option_table_is_the_engines() -> None:
    assert readme_table() == engine_options()


def test_readme_lichess_block_sets_real_options_in_range() -> None:
    text = README.read_text(encoding="utf-8")
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0].splitlines()
    start = block.index("  uci_options:")
    settings = {}
    for line in block[start + 1:]:
        if not line.startswith("    "):
            break
        name, value = line.split("#", 1)[0].split(":", 1)
        settings[name.strip()] = value.strip().strip('"')
    assert {"Move Overhead", "Threads", "Hash", "SyzygyPath"} <= set(settings), settings
    options = engine_options()
    for name, value in settings.items():
        kind, _, span = options[name]
        if kind == "spin":
            low, high = map(int, span.split("–"))
            assert low <= int(value) <= high, (name, value, span)
