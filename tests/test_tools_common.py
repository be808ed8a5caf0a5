"""tools/common.py: the clock the game-playing tools (match.py, clock.py) keep, and adjudication."""
from __future__ import annotations

import sys

import chess
import pytest

from tests.conftest import REPO_ROOT

from tools.common import Clock, parse_tc


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


@pytest.mark.parametrize("scores, ply, result", [
    ([1000] * 4, 10, 2), ([-1000] * 4, 10, 0),  # four plies at 1000 cp either way: resigned
    ([999] + [1000] * 3, 10, None), ([1000] * 3, 10, None),  # one short of the score, one ply short
    ([0] * 12, 80, 1), ([10, -10] * 6, 120, 1),  # twelve plies within 10 cp from ply 80: drawn
    ([0] * 12, 79, None), ([0] * 11 + [11], 120, None), ([0] * 11, 120, None),
])
def test_datagen_adjudicates_its_self_play_at_its_thresholds(scores: list[int], ply: int, result: int | None) -> None:
    """training/datagen.py's self-play adjudication, on White's result scale (2, 1, 0): its thresholds are
    part of the data's definition (a change would change the chunks), so they are written out here."""
    from training import datagen

    assert datagen.adjudicate(scores, ply) == result


def test_elo_is_zero_at_an_even_score_and_antisymmetric() -> None:
    from tools.common import elo

    assert elo(0.5) == 0
    assert abs(elo(0.75) + elo(0.25)) < 1e-9
    assert round(elo(0.75), 1) == 190.8


def test_pentanomial_statistics_and_pooling_follow_the_pair_scores() -> None:
    from tools.common import pentanomial
    from tools.elo import pooled

    pairs, mean, se = pentanomial([0, 0, 10, 0, 0])
    assert (pairs, mean, se) == (10, 0.5, 0.0)
    pairs, mean, se = pentanomial([1, 0, 0, 0, 1])
    assert (pairs, mean) == (2, 0.5) and round(se, 6) == round((0.5 / 2) ** 0.5, 6)
    one = pooled([[7, 13, 31, 28, 21]])
    two = pooled([[7, 13, 31, 28, 21], [7, 13, 31, 28, 21]])
    assert two[0] == 2 * one[0] and two[2] == one[2]
    assert one[3] < two[3] < two[2] < two[4] < one[4]


def test_sprt_llr_reproduces_the_shared_runner_and_leans_with_the_score() -> None:
    from tools.common import sprt_bounds, sprt_llr

    # Session 17's Threads 2 vs 1 run: match.py --sprt 0 15 printed LLR +2.48.
    assert round(sprt_llr([7, 13, 31, 28, 21], 0, 15), 2) == 2.48
    assert sprt_llr([21, 28, 31, 13, 7], 0, 15) < 0
    assert sprt_llr([0, 0, 50, 0, 0], 0, 15) == 0.0
    lower, upper = sprt_bounds(0.05, 0.05)
    assert round(upper, 2) == 2.94 and lower == -upper


def test_the_node_profile_files_every_second_under_one_part() -> None:
    from tools import node_profile

    nodes, micros, shares = node_profile.profile(2)
    assert nodes > 0 and micros > 0
    assert sum(shares.values()) == pytest.approx(1.0)
    assert set(shares) == {name for name, _ in node_profile.PARTS} | {node_profile.OTHER}
    assert shares[node_profile.OTHER] < 0.5  # the parts hold most of a node, not the leftovers


def test_the_node_profile_plays_a_game_on_the_clock() -> None:
    from tools import node_profile

    nodes = node_profile.self_play("0.4+0.01", 6, None)  # six plies, the classical evaluation
    assert nodes > 0
    nodes, micros, shares = node_profile.profile(0, game="0.4+0.01", plies=4)
    assert nodes > 0 and sum(shares.values()) == pytest.approx(1.0)
