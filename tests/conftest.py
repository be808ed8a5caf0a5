"""Shared fixtures for the Pawnstorm test suite."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from tests.uci_process import RawEngine, guarded_engine

REPO_ROOT = Path(__file__).resolve().parent.parent
#: Debian's Stockfish (the teacher, and an opponent), or None where it is not installed: tests that need it skip.
STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish" if Path("/usr/games/stockfish").exists() else None)

# No per-example deadline anywhere (CI's profile already has none): a loaded machine can stall
# any example, and the tests assert behaviour, never timings. The rest of the profile in force
# (CI's derandomised one in CI) is kept.
settings.register_profile("pawnstorm", parent=settings.default, deadline=None)
settings.load_profile("pawnstorm")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def engine_cmd() -> list[str]:
    """Command that starts the engine as a UCI subprocess.

    Run it with ``cwd=REPO_ROOT`` and/or ``env=engine_env`` so the source tree
    is importable even when the package is not installed in this interpreter.
    """
    return [sys.executable, "-m", "uci_engine"]


@pytest.fixture(scope="session")
def engine_env() -> dict[str, str]:
    """Environment for engine subprocesses: the repo root first on PYTHONPATH."""
    env = dict(os.environ)
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + old if old else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


# --- engine processes (used by every test that drives the real engine) ---


@pytest.fixture
def engine(engine_cmd, repo_root, engine_env):
    with guarded_engine(engine_cmd, repo_root, engine_env) as eng:
        yield eng


@pytest.fixture
def engine_no_book(engine):
    engine.configure({"OwnBook": False})
    return engine


@pytest.fixture
def raw(engine_cmd, repo_root, engine_env, tmp_path):
    proc = RawEngine(engine_cmd, repo_root, engine_env, tmp_path / "stderr.txt")
    try:
        yield proc
    finally:
        proc.close()
