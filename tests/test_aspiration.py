"""Aspiration windows at the root: the window, its widening on a fail, the full-window fallback.

From depth ASPIRATION_MIN_DEPTH on, each depth is searched first in a window
of ±ASPIRATION_WINDOW around the previous depth's score.  A root fail high
raises beta (alpha stays), a fail low lowers alpha (beta stays), the step
doubling each time; once the step passes 1000 cp the window is the full one.
The tests record every root search's window (`RootSearch.search_root`) and check
that the reported value is still exactly minimax's, however many
re-searches it took, and that the fails are reported as bounds.
"""
from __future__ import annotations

import chess
import pytest

import search.driver
from search.driver import ASPIRATION_MIN_DEPTH, ASPIRATION_WINDOW, Iteration, RootSearch, Searcher
from search.features import Features
from search.timeman import Limits
from search.types import EXACT, INFINITY, LOWER, UPPER
from tests.reference import minimax
from tests.test_multipv import root_values

#: WAC.001: the mate in 2 appears at depth 5, failing high three times.
WAC_001 = "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1"
#: Depth 4 falls below depth 3's score: one fail low.
ITALIAN_BLACK = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"
#: Small positions where a depth-4 minimax is cheap.
SMALL = [
    "8/8/3k4/8/8/3K4/3P4/8 w - - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",  # depth 4 fails low six times with a 1 cp window
    "4k3/8/8/8/8/8/4P3/4K2R w K - 0 1",
]


class Window:
    """One root search: its depth, window and result."""

    def __init__(self, depth: int, alpha: int, beta: int, score: int, store: bool) -> None:
        self.depth, self.alpha, self.beta, self.score, self.store = depth, alpha, beta, score, store

    @property
    def fail_high(self) -> bool:
        return self.score >= self.beta and self.beta < INFINITY

    @property
    def fail_low(self) -> bool:
        return self.score <= self.alpha and self.alpha > -INFINITY

    @property
    def full(self) -> bool:
        return (self.alpha, self.beta) == (-INFINITY, INFINITY)

    def __repr__(self) -> str:
        return f"d{self.depth}({self.alpha}, {self.beta}) -> {self.score}"


@pytest.fixture
def windows(monkeypatch) -> list[Window]:
    """Every root search's window, in order."""
    seen: list[Window] = []
    real_root = RootSearch.search_root

    def recording(self, moves, depth, alpha, beta, store=True):
        score = real_root(self, moves, depth, alpha, beta, store)
        seen.append(Window(depth, alpha, beta, score, store))
        return score

    monkeypatch.setattr(RootSearch, "search_root", recording)
    return seen


def at_depth(windows: list[Window], depth: int) -> list[Window]:
    return [window for window in windows if window.depth == depth]


def check_widening(tries: list[Window], previous_score: int, window: int) -> None:
    """One depth's root searches: centred on the previous score, widened on each fail, then exact."""
    first = tries[0]
    assert (first.alpha, first.beta) == (previous_score - window, previous_score + window), tries
    step = window
    for before, after in zip(tries, tries[1:]):
        assert before.fail_high or before.fail_low, f"re-searched after an exact score: {tries}"
        step *= 2
        if step > 1000:
            assert after.full, f"no full-window fallback: {tries}"
            break
        if before.fail_high:
            assert (after.alpha, after.beta) == (before.alpha, min(before.score + step, INFINITY)), tries
        else:
            assert (after.alpha, after.beta) == (max(before.score - step, -INFINITY), before.beta), tries
    last = tries[-1]
    assert last.full or last.alpha < last.score < last.beta, f"the depth ended on a bound: {tries}"


def test_shallow_depths_search_the_full_window(windows) -> None:
    Searcher(1).search(chess.Board(WAC_001), Limits(depth=ASPIRATION_MIN_DEPTH - 1))
    assert windows and all(window.full for window in windows), windows


def test_fail_high_raises_beta_until_the_score_fits(windows) -> None:
    reports: list[Iteration] = []
    result = Searcher(1).search(chess.Board(WAC_001), Limits(depth=5), on_iteration=reports.append)
    depth_4 = next(report for report in reports if report.depth == 4 and report.bound == EXACT)
    tries = at_depth(windows, 5)
    assert len(tries) >= 3 and all(t.fail_high for t in tries[:-1]), tries
    check_widening(tries, depth_4.score, ASPIRATION_WINDOW)
    # Each fail high was reported as a lower bound, before the exact score.
    bounds = [report for report in reports if report.depth == 5]
    assert [report.bound for report in bounds] == [LOWER] * (len(tries) - 1) + [EXACT]
    assert [report.score for report in bounds] == [t.score for t in tries]
    assert result.score == tries[-1].score and result.pv[0] == chess.Move.from_uci("g3g6")


def test_fail_low_lowers_alpha_until_the_score_fits(windows) -> None:
    reports: list[Iteration] = []
    Searcher(1).search(chess.Board(ITALIAN_BLACK), Limits(depth=4), on_iteration=reports.append)
    depth_3 = next(report for report in reports if report.depth == 3)
    tries = at_depth(windows, 4)
    assert len(tries) == 2 and tries[0].fail_low, tries
    check_widening(tries, depth_3.score, ASPIRATION_WINDOW)
    assert [report.bound for report in reports if report.depth == 4] == [UPPER, EXACT]


def test_a_wide_fail_falls_back_on_the_full_window(windows, monkeypatch) -> None:
    # With a 600 cp window the first doubling passes 1000 cp: straight to the full window.
    monkeypatch.setattr(search.driver, "ASPIRATION_WINDOW", 600)
    reports: list[Iteration] = []
    Searcher(1).search(chess.Board(WAC_001), Limits(depth=5), on_iteration=reports.append)
    depth_4 = next(report for report in reports if report.depth == 4 and report.bound == EXACT)
    tries = at_depth(windows, 5)
    assert len(tries) == 2 and tries[0].fail_high and tries[1].full, tries
    check_widening(tries, depth_4.score, 600)


def test_every_depth_follows_the_widening_rule(windows, monkeypatch) -> None:
    """A 1 cp window fails at nearly every depth, both ways."""
    monkeypatch.setattr(search.driver, "ASPIRATION_WINDOW", 1)
    reports: list[Iteration] = []
    Searcher(1).search(chess.Board(ITALIAN_BLACK), Limits(depth=6), on_iteration=reports.append)
    exact = {report.depth: report.score for report in reports if report.bound == EXACT}
    kinds = set()
    for depth in range(ASPIRATION_MIN_DEPTH, 7):
        tries = at_depth(windows, depth)
        check_widening(tries, exact[depth - 1], 1)
        kinds.update("high" if t.fail_high else "low" for t in tries[:-1])
    assert kinds == {"high", "low"}


@pytest.mark.parametrize("fen", SMALL)
def test_re_searches_keep_the_minimax_value(windows, monkeypatch, fen: str) -> None:
    """Exact mode at depth 4 with a 1 cp window: fails and re-searches, and still minimax's value."""
    monkeypatch.setattr(search.driver, "ASPIRATION_WINDOW", 1)
    board = chess.Board(fen)
    result = Searcher(1, Features.exact()).search(board, Limits(depth=4))
    assert any(t.fail_high or t.fail_low for t in at_depth(windows, 4)), windows
    assert result.score == minimax(board, 4)


def test_multipv_lines_re_search_their_own_windows(windows, monkeypatch) -> None:
    """MultiPV at depth 4: each line's window is centred on that line's previous score."""
    monkeypatch.setattr(search.driver, "ASPIRATION_WINDOW", 1)
    board = chess.Board(SMALL[0])
    reports: list[Iteration] = []
    Searcher(1, Features.exact()).search(board, Limits(depth=4), on_iteration=reports.append, multipv=3)
    lines = [report for report in reports if report.depth == 4]
    assert [line.score for line in lines] == root_values(board, 4)[:3]
    later_lines = [t for t in at_depth(windows, 4) if not t.store]
    assert any(t.fail_high or t.fail_low for t in later_lines), windows
