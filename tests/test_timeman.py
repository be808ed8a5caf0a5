"""Time allocation: soft/hard limits inside the clock, overhead subtracted."""
from __future__ import annotations

import chess
import pytest

from search.timeman import MIN_PLAN_MOVES, PLAN_MOVES, Deadlines, Limits, TimeBudget, allocate, stability_scale


def test_infinite_and_depth_only_have_no_time_limit() -> None:
    assert allocate(Limits(infinite=True), chess.WHITE).hard is None
    assert allocate(Limits(depth=5), chess.WHITE).hard is None
    assert allocate(Limits(nodes=100), chess.BLACK).soft is None


def test_movetime_uses_the_time_minus_overhead() -> None:
    budget = allocate(Limits(movetime=1000), chess.WHITE, move_overhead=50)
    assert budget.hard == 950 and budget.soft is None  # all of it: no soft limit to stop earlier


@pytest.mark.parametrize("time_left, inc, mtg", [
    (60_000, 0, None), (10_000, 100, None), (1_000, 10, None), (300, 0, None), (50, 0, None),
    (5_000, 0, 1), (5_000, 0, 40), (120_000, 2_000, 5), (0, 0, None), (20, 1000, None),
])
@pytest.mark.parametrize("color", [chess.WHITE, chess.BLACK])
def test_limits_fit_inside_the_clock(time_left: int, inc: int, mtg: int | None, color: chess.Color) -> None:
    limits = Limits(wtime=time_left, btime=time_left, winc=inc, binc=inc, movestogo=mtg)
    overhead = 30
    budget = allocate(limits, color, move_overhead=overhead)
    assert budget.soft is not None and budget.hard is not None
    assert 0 < budget.soft <= budget.hard
    # Never plan to use the overhead's share of the clock: the move must arrive in time.
    assert budget.hard <= max(1.0, time_left - overhead)


def test_movetime_beside_a_clock_stops_at_whichever_comes_first() -> None:
    short_clock = allocate(Limits(movetime=1500, wtime=200, btime=200), chess.WHITE, move_overhead=30)
    assert short_clock.hard is not None and short_clock.hard <= 200 - 30
    long_clock = allocate(Limits(movetime=500, wtime=600_000, btime=600_000), chess.WHITE, move_overhead=30)
    assert long_clock.hard == 470


def test_only_the_opponents_clock_means_ours_is_empty() -> None:
    """As Stockfish reads it: a `go` with a clock always gets a timed answer."""
    budget = allocate(Limits(wtime=60_000, winc=1000), chess.BLACK)
    assert budget.hard == 1.0 and budget.soft == 1.0


def test_uses_own_clock() -> None:
    limits = Limits(wtime=60_000, btime=1_000)
    assert allocate(limits, chess.WHITE).hard > allocate(limits, chess.BLACK).hard


def test_movestogo_one_spends_more_than_sudden_death() -> None:
    sudden = allocate(Limits(wtime=10_000), chess.WHITE)
    last_move = allocate(Limits(wtime=10_000, movestogo=1), chess.WHITE)
    assert last_move.hard > sudden.hard
    assert last_move.hard < 10_000


@pytest.mark.parametrize("time_left, mtg", [(1_000, 10), (2_000, 20), (5_000, 40), (300, 5), (100, 10)])
def test_movestogo_keeps_the_overhead_back_for_every_move_left(time_left: int, mtg: int) -> None:
    """Each move left in the control pays the GUI's latency: none may be planned into this one."""
    overhead = 30
    budget = allocate(Limits(wtime=time_left, movestogo=mtg), chess.WHITE, move_overhead=overhead)
    assert budget.hard <= max(1.0, time_left - overhead * mtg)


def test_the_clock_is_shared_over_the_moves_the_game_may_still_last() -> None:
    """Early on the plan is long (a move gets less); from PLAN_MOVES - MIN_PLAN_MOVES on it stays MIN_PLAN_MOVES."""
    limits = Limits(wtime=10_000, btime=10_000)
    budgets = [allocate(limits, chess.WHITE, 0, ply).soft for ply in (0, 20, 40)]
    assert budgets[0] < budgets[1] < budgets[2]
    settled = 2 * (PLAN_MOVES - MIN_PLAN_MOVES)
    assert allocate(limits, chess.WHITE, 0, settled).soft == allocate(limits, chess.WHITE, 0, settled + 60).soft
    assert allocate(limits, chess.WHITE, 0, 0).hard == pytest.approx(3 * 10_000 / PLAN_MOVES)


def test_the_increments_to_come_are_part_of_the_plan() -> None:
    """With an increment a move may spend its share of the clock and nearly all of its own increment."""
    plain = allocate(Limits(wtime=10_000), chess.WHITE, 0, 100).hard
    with_increment = allocate(Limits(wtime=10_000, winc=100), chess.WHITE, 0, 100).hard
    assert with_increment == pytest.approx(plain + 3 * 100 * (MIN_PLAN_MOVES - 1) / MIN_PLAN_MOVES)


def test_movestogo_shorter_than_the_plan_shares_the_clock_among_the_moves_left() -> None:
    assert allocate(Limits(wtime=10_000, movestogo=10), chess.WHITE, 0, 0).hard == pytest.approx(3 * 10_000 / 10)


def test_increment_adds_thinking_time() -> None:
    assert allocate(Limits(wtime=10_000, winc=1_000), chess.WHITE).soft > allocate(Limits(wtime=10_000), chess.WHITE).soft


def test_deadlines_without_ponder_run_from_the_start() -> None:
    deadlines = Deadlines(TimeBudget(100, 300), now=10.0)
    assert deadlines.soft == pytest.approx(10.1) and deadlines.hard == pytest.approx(10.3)


def test_short_ponder_leaves_the_rest_of_the_budget() -> None:
    """Pondering time counts towards the soft limit; the hard limit runs from the ponderhit."""
    deadlines = Deadlines(TimeBudget(100, 300), now=10.0, active=False)
    assert not deadlines.timed and not deadlines.hard_passed(99.0)
    deadlines.activate(10.05)
    assert deadlines.soft == pytest.approx(10.1)
    assert deadlines.hard == pytest.approx(10.35)


def test_long_ponder_answers_at_once_on_ponderhit() -> None:
    deadlines = Deadlines(TimeBudget(100, 300), now=10.0, active=False)
    deadlines.activate(12.0)
    assert deadlines.hard_passed(12.0) and deadlines.soft_passed(12.0)


def test_soft_limit_stretches_and_shrinks_with_the_scale() -> None:
    deadlines = Deadlines(TimeBudget(100, 300), now=10.0)
    assert deadlines.soft_passed(10.12)
    assert not deadlines.soft_passed(10.12, scale=1.5)  # an unstable best move: think on
    assert deadlines.soft_passed(10.08, scale=0.75)  # a settled one: answer sooner


def test_stability_scale() -> None:
    """A best move that just changed earns more time; one that held for long, less."""
    assert stability_scale(7, 7, 0) > stability_scale(6, 7, 0) > stability_scale(5, 7, 0)
    assert stability_scale(5, 7, 0) > stability_scale(2, 7, 0)
    assert stability_scale(0, 7, 0) < 1.0  # never changed
    assert stability_scale(5, 7, 50) > stability_scale(5, 7, 0)  # a falling score
