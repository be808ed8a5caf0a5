"""tools/common.py: the clock the game-playing tools (match.py, clock.py) keep."""
from __future__ import annotations

import sys

import chess

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tools"))
from common import Clock, parse_tc  # noqa: E402


def test_time_controls_parse_with_and_without_moves_to_go() -> None:
    assert parse_tc("10+0.1") == (10.0, 0.1, None)
    assert parse_tc("60") == (60.0, 0.0, None)
    assert parse_tc("40/5") == (5.0, 0.0, 40)
    assert parse_tc("40/5+0.5") == (5.0, 0.5, 40)


def test_increment_is_added_after_the_move_and_the_flag_falls_past_the_margin() -> None:
    clock = Clock("10+0.1")
    limit = clock.limit(chess.WHITE)
    assert (limit.white_clock, limit.black_clock, limit.white_inc, limit.remaining_moves) == (10.0, 10.0, 0.1, None)
    assert clock.punch(chess.WHITE, 2.0)
    assert clock.left[chess.WHITE] == 8.1 and clock.left[chess.BLACK] == 10.0
    assert clock.punch(chess.BLACK, 10.04, margin=0.05)  # 0.04 s over: within the margin
    assert not clock.punch(chess.WHITE, 8.2, margin=0.05)  # 0.1 s over: lost on time
    assert round(clock.left[chess.WHITE], 3) == -0.1  # what the loss is reported with


def test_a_moves_to_go_control_counts_down_and_tops_the_clock_up() -> None:
    clock = Clock("2/5")
    assert clock.limit(chess.WHITE).remaining_moves == 2
    assert clock.punch(chess.WHITE, 1.0)
    assert clock.limit(chess.WHITE).remaining_moves == 1 and clock.left[chess.WHITE] == 4.0
    assert clock.punch(chess.WHITE, 1.0)
    assert clock.limit(chess.WHITE).remaining_moves == 2 and clock.left[chess.WHITE] == 8.0  # a new period
    assert clock.limit(chess.BLACK).remaining_moves == 2 and clock.left[chess.BLACK] == 5.0
