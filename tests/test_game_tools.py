"""tools.selfplay and tools.clock play their games through tools.match_game's one loop and its per-move hook."""
from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import chess
import pytest

from tests.conftest import REPO_ROOT
from tools import clock, selfplay
from tools.match_game import EngineSpec, Job, Move, play_game, rules

FAKE = [sys.executable, str(REPO_ROOT / "tests" / "fake_uci.py"), "legal"]
STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish" if Path("/usr/games/stockfish").exists() else None)


def test_the_hook_sees_every_move_before_it_is_played() -> None:
    engine = EngineSpec("fake", FAKE)
    seen: list[Move] = []
    result = play_game(Job(0, 0, engine, engine, chess.Board()), rules(nodes=10, max_plies=12), seen.append)
    assert result.reason == "max plies" and len(seen) == 12
    board = chess.Board()
    for played in seen:
        assert played.board == board and played.move in board.legal_moves and played.clock_left is None
        board.push(played.move)


def test_rules_start_from_the_match_defaults_and_refuse_unknown_names() -> None:
    assert rules().resign_score == 700 and rules(nodes=5).nodes == 5
    with pytest.raises(TypeError, match="warp"):
        rules(warp=9)


def test_the_clock_tool_records_think_time_and_clock_left() -> None:
    record = clock.play_clock_game(shlex.join(FAKE), chess.Board(), "5+0.05", 10)
    assert len(record) == 10
    assert [number for number, _, _ in record] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert all(0 <= spent < 5 and 0 < left <= 5 + 0.05 * number for number, spent, left in record)


@pytest.mark.skipif(STOCKFISH is None, reason="Stockfish is not installed (apt-get install stockfish)")
def test_self_play_annotates_every_move_with_the_movers_score() -> None:
    game = selfplay.play_selfplay_game([STOCKFISH], chess.Board(), 200, seed=1)
    moves = list(game.mainline())
    assert moves and all(node.eval() is not None for node in moves)
    assert game.headers["Result"] in ("1-0", "0-1", "1/2-1/2") and game.headers["Event"] == "Self-play, 200 nodes"
    assert len(moves) <= selfplay.MAX_PLIES
