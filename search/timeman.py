"""Search limits and the time manager.

The time manager turns the clock into two numbers:

* a **soft** limit: after a depth completes, do not start the next one past it
  (the next depth usually costs several times the previous, and would be
  aborted anyway, wasting the time);
* a **hard** limit: abort the search in the middle of a depth and play the best
  move of the last completed one.

`Move Overhead` (GUI and pipe latency) is taken off the clock first so that the
move arrives before the flag falls; under `movestogo`, once for each move left
in the time control, since every one of them pays it.
"""
from __future__ import annotations

from dataclasses import dataclass

import chess

#: The clock is planned over the moves the game may still last: PLAN_MOVES
#: less the moves played, never fewer than MIN_PLAN_MOVES, counting the
#: increments those moves will bring.  At 10+0.1 (744 games of
#: docs/logs/qstt-sprt-10+0.1-part1/2) the game had a median 57 moves left at
#: move 0, 37 at move 20 and about 16 from move 50 on; planning for about
#: the upper quartile spends the clock evenly until the middlegame is over
#: instead of most of it in the first twenty moves.
PLAN_MOVES = 50
MIN_PLAN_MOVES = 25


def stability_scale(last_change: int, depth: int, score_drop: int) -> float:
    """How much of the soft limit to use after completing `depth`.

    `last_change` is the last depth at which the best move changed (0 for
    never).  A best move that just changed has not been looked at deeply
    yet: think on (more when the score is also falling).  One that has
    held for many depths will most likely hold for the next: answer sooner
    and bank the time.
    """
    since = depth - last_change
    if since == 0:
        scale = 1.8
    elif since == 1:
        scale = 1.3
    elif since >= 4:
        scale = 0.75
    else:
        scale = 1.0
    if score_drop > 30:
        scale *= 1.4
    return scale


@dataclass
class Limits:
    """What `go` asked for; every field optional, times in milliseconds."""

    wtime: int | None = None
    btime: int | None = None
    winc: int | None = None
    binc: int | None = None
    movestogo: int | None = None
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None
    mate: int | None = None
    infinite: bool = False
    #: Thinking on the opponent's time: no clock until `ponderhit`.
    ponder: bool = False
    #: Restrict the root to these moves (UCI notation), if given.
    searchmoves: list[str] | None = None
    #: Depths finished whatever `nodes` says (the strength limit needs its
    #: candidate lines from at least one complete depth); the clock still rules.
    min_depth: int = 0

    def clock(self, color: chess.Color) -> tuple[int | None, int]:
        """(time left, increment) of `color`."""
        if color == chess.WHITE:
            return self.wtime, self.winc or 0
        return self.btime, self.binc or 0


@dataclass(frozen=True)
class TimeBudget:
    """Milliseconds from the start of the search; None means no limit."""

    soft: float | None
    hard: float | None


def allocate(limits: Limits, color: chess.Color, move_overhead: int = 30, ply: int = 0) -> TimeBudget:
    """Decide how long to think about this move, the game's `ply`-th (from 0)."""
    if limits.infinite and not limits.ponder:
        return TimeBudget(None, None)
    clock = _clock_budget(limits, color, move_overhead, ply)
    if limits.movetime is not None:
        # Use all of it (UCI: "search exactly x mseconds"): no soft limit, which the
        # stability scale could shrink; keep deepening until the hard limit cuts in.
        # With a clock as well, whichever limit comes first (as Stockfish does).
        hard = max(1.0, limits.movetime - move_overhead)
        if clock is None:
            return TimeBudget(None, hard)
        assert clock.hard is not None
        return TimeBudget(clock.soft, min(hard, clock.hard))
    return clock if clock is not None else TimeBudget(None, None)  # depth / nodes / mate only


def _clock_budget(limits: Limits, color: chess.Color, move_overhead: int, ply: int) -> TimeBudget | None:
    """The budget the clock gives, None without one.

    A `go` that gives only the opponent's clock gives ours as empty (as
    Stockfish reads it): the answer comes at once, not after an unlimited
    search.
    """
    time_left, increment = limits.clock(color)
    if time_left is None:
        if limits.wtime is None and limits.btime is None:
            return None
        time_left = 0

    moves_to_go = max(MIN_PLAN_MOVES, PLAN_MOVES - ply // 2)
    # The overhead is paid on every move: before a time control, keep it back for each move
    # left in the control, or the last moves find the clock already spent by the latency.
    reserve = move_overhead
    if limits.movestogo is not None and limits.movestogo > 0:
        moves_to_go = min(limits.movestogo, moves_to_go)
        reserve = move_overhead * limits.movestogo
    available = max(0.0, time_left - reserve)
    # An even share of the clock and of the increments still to come.
    optimum = (available + increment * (moves_to_go - 1)) / moves_to_go
    # Never plan to spend more than a fraction of the clock on one move; the
    # last move before a time control may use most of what is left.
    ceiling = available * (0.8 if moves_to_go == 1 else 0.4)
    hard = max(1.0, min(optimum * 3.0, ceiling))
    soft = max(1.0, min(optimum * 0.6, hard))
    return TimeBudget(soft, hard)


class Deadlines:
    """The budget turned into wall-clock instants; dormant while pondering.

    `ponderhit` starts the clock.  The time spent pondering counts towards
    the soft limit, as in Stockfish: the engine has already thought that
    long about this very position, for free.  So after a long ponder the
    answer comes at once (if a depth is complete), and after a short one
    the search goes on for what is left of the budget.  The hard limit
    always runs from the ponderhit, when our clock started.
    """

    def __init__(self, budget: TimeBudget, now: float, active: bool = True) -> None:
        self.budget = budget
        self.started = now
        self.soft: float | None = None
        self.hard: float | None = None
        self.active = False
        if active:
            self.activate(now)

    def activate(self, now: float) -> None:
        """Start the clock at `now` (the search's start, or the ponderhit)."""
        if self.budget.soft is not None:
            self.soft = self.started + self.budget.soft / 1000
        if self.budget.hard is not None:
            self.hard = now + self.budget.hard / 1000
            if self.soft is not None and now > self.started and now >= self.soft:
                self.hard = now  # pondered longer than the move was worth: answer now
        self.active = True

    def hard_passed(self, now: float) -> bool:
        return self.hard is not None and now >= self.hard

    def soft_passed(self, now: float, scale: float = 1.0) -> bool:
        """Is the soft limit, stretched or shrunk by `scale`, behind us?"""
        return self.soft is not None and now >= self.started + (self.soft - self.started) * scale

    @property
    def timed(self) -> bool:
        """Is a clock running (so time is worth saving)?"""
        return self.active and self.hard is not None
