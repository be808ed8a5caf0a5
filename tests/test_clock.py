"""The driver keeps to the clock: hard limit, soft limit × stability, proven mates, pondering.

Every search here runs on `tests.fake_clock`'s node clock: time passes with
the nodes searched, so a limit of 50 ms is "5,000 nodes" on any machine,
however slow or loaded, and each test can say exactly where the search must
stop.  The search is deterministic (a fresh `Searcher`, the classical
evaluation), so so is every stop.
"""
from __future__ import annotations

import threading

import chess
import pytest

import search.driver
from search.alphabeta import CHECK_EVERY
from search.driver import Iteration, Searcher
from search.timeman import Limits, allocate, stability_scale
from search.types import EXACT
from tests.fake_clock import NodeClock, install_node_clock

#: Line 2 of data/suites/mate2.fen: 1. Rxf7+ Kxf7 2. Qg7#.
MATE_IN_TWO = "3rrk2/2p2pR1/p4n2/1p1PpP2/2p2q1P/3P1BQ1/PPP5/6RK w - - 1 1"
START = chess.Board()


class Recorder:
    """`on_iteration` that notes the clock at each completed depth."""

    def __init__(self, clock: NodeClock) -> None:
        self.clock = clock
        self.reports: list[Iteration] = []
        #: (depth, ms on the clock, report) of each depth completed in full.
        self.completed: list[tuple[int, float, Iteration]] = []

    def __call__(self, iteration: Iteration) -> None:
        self.reports.append(iteration)
        if iteration.bound == EXACT and not iteration.partial:
            self.completed.append((iteration.depth, self.clock.ms(), iteration))


def constant_scale(monkeypatch: pytest.MonkeyPatch, scale: float) -> None:
    """Replace the stability scale the driver applies to the soft limit."""
    monkeypatch.setattr(search.driver, "stability_scale", lambda *args: scale)


# --- the hard limit ----------------------------------------------------------------------


@pytest.mark.parametrize("limits, overhead, hard_ms", [
    (Limits(movetime=80), 30, 50),                 # movetime less Move Overhead
    (Limits(wtime=1000, btime=1), 0, 60),          # 3 × (1000 / 50) under a clock, at move 1
])
def test_hard_limit_aborts_the_depth_at_the_first_look_past_it(monkeypatch, limits, overhead, hard_ms) -> None:
    ms_per_node = 0.01
    clock = install_node_clock(monkeypatch, ms_per_node)
    constant_scale(monkeypatch, 100.0)  # the soft limit never ends these searches
    assert allocate(limits, chess.WHITE, overhead).hard == hard_ms
    record = Recorder(clock)
    result = Searcher(1).search(START, limits, move_overhead=overhead, on_iteration=record)
    hard_nodes = hard_ms / ms_per_node
    # The clock is read every CHECK_EVERY nodes: the search stops at the first look past the limit.
    assert hard_nodes <= result.nodes < hard_nodes + CHECK_EVERY, result.nodes
    assert result.time_ms == pytest.approx(result.nodes * ms_per_node)
    # Aborted inside a depth: the answer is the last completed depth's (or a proven better root move).
    depth, _, last = record.completed[-1]
    assert last.nodes < hard_nodes
    if record.reports[-1].partial:  # the aborted depth had already proven a better root move
        assert (result.depth, result.best_move) == (depth + 1, record.reports[-1].pv[0])
    else:
        assert (result.depth, result.best_move) == (depth, last.pv[0])


def test_without_a_clock_the_node_clock_does_not_matter(monkeypatch) -> None:
    install_node_clock(monkeypatch, 1000.0)  # a second per node: any clock would have run out
    result = Searcher(1).search(START, Limits(depth=4))
    assert result.depth == 4


# --- the soft limit, stretched or shrunk by the stability scale ----------------------------------


def stop_depth(completed: list[tuple[int, float, Iteration]], limit_ms) -> int:
    """The first completed depth at or past its (possibly per-depth) soft limit."""
    for index, (depth, ms, _) in enumerate(completed):
        if ms >= limit_ms(index):
            return depth
    raise AssertionError(f"no depth reached the soft limit: {[(d, ms) for d, ms, _ in completed]}")


@pytest.mark.parametrize("scale", [0.5, 1.0, 2.0])
def test_soft_limit_times_the_scale_ends_the_search_after_a_depth(monkeypatch, scale) -> None:
    clock = install_node_clock(monkeypatch, 0.01)
    constant_scale(monkeypatch, scale)
    limits = Limits(wtime=1250, btime=1250)
    budget = allocate(limits, chess.WHITE, 0)
    assert (budget.soft, budget.hard) == (15, 75)
    record = Recorder(clock)
    result = Searcher(1).search(START, limits, move_overhead=0, on_iteration=record)
    expected = stop_depth(record.completed, lambda _: budget.soft * scale)
    assert result.depth == expected, [(d, ms) for d, ms, _ in record.completed]
    # It stopped right after that depth: not one node more.
    assert result.nodes == record.completed[-1][2].nodes
    assert clock.ms() < budget.hard


def test_the_scale_changes_where_the_search_stops(monkeypatch) -> None:
    depths = {}
    for scale in (0.5, 2.0):
        with monkeypatch.context() as patch:
            install_node_clock(patch, 0.01)
            constant_scale(patch, scale)
            depths[scale] = Searcher(1).search(START, Limits(wtime=1250), move_overhead=0).depth
    assert depths[0.5] < depths[2.0], depths


def test_soft_limit_uses_the_stability_of_the_best_move(monkeypatch) -> None:
    """The real scale: from the best move's changes and the score's fall, depth by depth."""
    clock = install_node_clock(monkeypatch, 0.01)
    limits = Limits(wtime=1000, btime=1000)
    soft = allocate(limits, chess.WHITE, 0).soft
    record = Recorder(clock)
    result = Searcher(1).search(START, limits, move_overhead=0, on_iteration=record)
    scales = []
    last_change = 0
    previous: Iteration | None = None
    for depth, _, line in record.completed:
        if previous is not None and line.pv[0] != previous.pv[0]:
            last_change = depth
        drop = previous.score - line.score if previous is not None else 0
        scales.append(stability_scale(last_change, depth, drop))
        previous = line
    assert result.depth == stop_depth(record.completed, lambda index: soft * scales[index])
    assert result.nodes == record.completed[-1][2].nodes


# --- mates ---------------------------------------------------------------------------------------


def test_a_proven_mate_ends_a_timed_search_long_before_the_soft_limit(monkeypatch) -> None:
    clock = install_node_clock(monkeypatch, 0.01)
    limits = Limits(wtime=600_000, btime=600_000)
    record = Recorder(clock)
    board = chess.Board(MATE_IN_TWO)
    result = Searcher(1).search(board, limits, move_overhead=0, on_iteration=record)
    assert result.score == record.completed[-1][2].score and record.completed[-1][2].mate_in == 2
    # Searched to twice the mate's length and two plies more, then answered.
    assert result.depth == 2 * 2 + 2
    assert clock.ms() < allocate(limits, chess.WHITE, 0).soft
    # Without a clock (a depth limit) the same mate does not stop the search.
    assert Searcher(1).search(board, Limits(depth=8)).depth == 8


def test_go_mate_stops_at_the_first_depth_that_finds_it(monkeypatch) -> None:
    install_node_clock(monkeypatch, 0.01)
    reports: list[Iteration] = []
    result = Searcher(1).search(chess.Board(MATE_IN_TWO), Limits(mate=2), on_iteration=reports.append)
    first = next(report.depth for report in reports if report.mate_in is not None and 0 < report.mate_in <= 2)
    assert result.depth == first and reports[-1].depth == first


# --- pondering: the clock starts at ponderhit ------------------------------------------------------


def test_pondering_ignores_the_clock(monkeypatch) -> None:
    clock = install_node_clock(monkeypatch, 1.0)  # a millisecond per node: the clock would run out at once
    limits = Limits(wtime=1000, btime=1000, ponder=True, depth=5)
    result = Searcher(1).search(START, limits, move_overhead=0, ponderhit=threading.Event())
    assert result.depth == 5
    assert clock.ms() > 10 * allocate(limits, chess.WHITE, 0).hard


def test_ponderhit_after_a_long_ponder_answers_at_once(monkeypatch) -> None:
    clock = install_node_clock(monkeypatch, 1.0)
    limits = Limits(wtime=1000, btime=1000, ponder=True)
    ponderhit = threading.Event()
    record = Recorder(clock)

    def report(iteration: Iteration) -> None:
        record(iteration)
        if iteration.depth == 3:
            ponderhit.set()  # long past the soft limit (24 ms): the move is due now

    result = Searcher(1).search(START, limits, move_overhead=0, ponderhit=ponderhit, on_iteration=report)
    assert result.depth == 3
    assert result.nodes == record.completed[-1][2].nodes  # not a node after the ponderhit


def test_ponderhit_after_a_short_ponder_keeps_the_budget(monkeypatch) -> None:
    """A ponderhit at depth 1: the clock runs from then, and pondering counts towards the soft limit."""
    ponder_limits = Limits(wtime=1000, btime=1000, ponder=True)
    with monkeypatch.context() as patch:
        install_node_clock(patch, 0.01)
        plain = Searcher(1).search(START, Limits(wtime=1000, btime=1000), move_overhead=0)
    clock = install_node_clock(monkeypatch, 0.01)
    ponderhit = threading.Event()
    record = Recorder(clock)

    def report(iteration: Iteration) -> None:
        record(iteration)
        ponderhit.set()

    pondered = Searcher(1).search(START, ponder_limits, move_overhead=0, ponderhit=ponderhit, on_iteration=report)
    assert pondered.depth > 1
    # Same stop as a search whose clock ran from the start: the ponder time (depth 1) counted.
    assert (pondered.depth, pondered.nodes, pondered.best_move) == (plain.depth, plain.nodes, plain.best_move)
    # And without the ponderhit the clock never starts: the search goes on past that depth.
    with monkeypatch.context() as patch:
        install_node_clock(patch, 0.01)
        still_pondering = Searcher(1).search(START, Limits(wtime=1000, btime=1000, ponder=True, depth=plain.depth + 1),
                                             move_overhead=0, ponderhit=threading.Event())
    assert still_pondering.depth == plain.depth + 1


def test_movetime_is_searched_to_the_end(monkeypatch) -> None:
    """UCI's `go movetime x`: search exactly x ms.  A settled best move does not end it early."""
    ms_per_node = 0.01
    clock = install_node_clock(monkeypatch, ms_per_node)
    record = Recorder(clock)
    result = Searcher(1).search(START, Limits(movetime=25), move_overhead=0, on_iteration=record)
    # Depth 5 completes past 3/4 of the time with a best move that has not changed since
    # depth 1 (stability scale 0.75): under a clock that would end the search, here not.
    assert 0.75 * 25 <= record.completed[4][1] < 25
    assert 2500 <= result.nodes < 2500 + CHECK_EVERY, [(d, ms) for d, ms, _ in record.completed]


# --- whole games on the clock ----------------------------------------------------------------

#: Node speed of the games below: 10,000 nodes a second, about Pawnstorm's own, so that the
#: clock is read (every CHECK_EVERY nodes) as often, in milliseconds, as in real play.
GAME_MS_PER_NODE = 0.1
#: What each move costs beyond the search, on the clock of the side that moved: the GUI's and
#: the pipes' share, which `Move Overhead` (the default 30 ms) is there to cover.
LAG_MS = 10
GAME_PLIES = 200


def play_on_the_clock(monkeypatch, base_ms: int, increment_ms: int = 0,
                      moves_per_control: int | None = None) -> tuple[chess.Board, dict[chess.Color, list[float]]]:
    """A whole game, one searcher per side, each move's time deducted from the mover's clock.

    As a GUI keeps the clocks: the time the search took plus LAG_MS comes off,
    then the increment goes on; with `moves_per_control`, `movestogo` counts
    down the moves left in the control and `base_ms` is added when it is
    done.  Fails the moment a clock would run out.  Returns the game and, for
    each side, its clock after each of its moves.
    """
    clock = install_node_clock(monkeypatch, GAME_MS_PER_NODE)
    searchers = {chess.WHITE: Searcher(1), chess.BLACK: Searcher(1)}
    left = {chess.WHITE: float(base_ms), chess.BLACK: float(base_ms)}
    history: dict[chess.Color, list[float]] = {chess.WHITE: [], chess.BLACK: []}
    board = chess.Board()
    while not board.is_game_over(claim_draw=True) and len(board.move_stack) < GAME_PLIES:
        side = board.turn
        moves_made = len(history[side])
        movestogo = None if moves_per_control is None else moves_per_control - moves_made % moves_per_control
        limits = Limits(wtime=int(left[chess.WHITE]), btime=int(left[chess.BLACK]),
                        winc=increment_ms, binc=increment_ms, movestogo=movestogo)
        started = clock.ms()
        result = searchers[side].search(board, limits)
        left[side] -= clock.ms() - started + LAG_MS
        assert left[side] > 0, (f"{'White' if side else 'Black'} lost on time at move {moves_made + 1} "
                                f"(movestogo {movestogo}): {left[side]:.1f} ms, {board.fen()}")
        left[side] += increment_ms
        if movestogo == 1:
            left[side] += base_ms
        history[side].append(left[side])
        assert result.best_move in board.legal_moves
        board.push(result.best_move)
    return board, history


def test_a_whole_game_under_wtime_and_winc_never_runs_out_of_time(monkeypatch) -> None:
    board, history = play_on_the_clock(monkeypatch, base_ms=2000, increment_ms=20)  # 2+0.02 at 10k nps
    assert board.is_game_over(claim_draw=True) or len(board.move_stack) == GAME_PLIES
    for side, clocks in history.items():
        # The clock is used, not hoarded: the time left falls well below the start, and the
        # increment keeps it above the overhead the engine keeps back.
        assert min(clocks) < 2000 / 2, (side, clocks)
        assert min(clocks) > 30, (side, clocks)


def test_a_whole_game_under_movestogo_never_runs_out_of_time(monkeypatch) -> None:
    board, history = play_on_the_clock(monkeypatch, base_ms=500, moves_per_control=10)  # 10 moves in 0.5 s
    assert len(board.move_stack) > 2 * 10, "the game should run past the first control"
    for side, clocks in history.items():
        # Each control is used, not hoarded: just before it ends (movestogo 1) little is left.
        before_control = [clock - 500 for clock in clocks[9::10]]
        assert before_control and max(before_control) < 500 / 2, (side, before_control)
