"""A deterministic clock for the search: time that passes with nodes, not with the machine.

`install_node_clock(monkeypatch, ms_per_node)` replaces the clock the search
driver reads (`search.driver.time`) with one that advances `ms_per_node`
milliseconds per node searched (every call to `AlphaBeta._tick`), plus
whatever a test adds with `advance`.  A search under a clock then stops at the
same node on every machine, however slow or loaded, so tests can assert
exactly when the time manager cuts in.

Everything that couples the tests to the driver's internals is here: if the
driver reads its clock elsewhere, this is the one place to change.
"""
from __future__ import annotations

import time as real_time
import types

import pytest

import search.driver
from search.alphabeta import AlphaBeta


class NodeClock:
    """Seconds = a fixed origin + nodes searched × ms_per_node / 1000 + manual advances."""

    ORIGIN = 1000.0

    def __init__(self, ms_per_node: float) -> None:
        self.ms_per_node = ms_per_node
        #: Nodes searched (all searches) since the clock was installed.
        self.nodes = 0
        self._advanced = 0.0

    def __call__(self) -> float:
        return self.ORIGIN + self.nodes * self.ms_per_node / 1000 + self._advanced

    def ms(self) -> float:
        """Milliseconds since the clock was installed."""
        return (self() - self.ORIGIN) * 1000

    def advance(self, ms: float) -> None:
        """Let `ms` milliseconds pass without any node searched."""
        self._advanced += ms / 1000


def install_node_clock(monkeypatch: pytest.MonkeyPatch, ms_per_node: float) -> NodeClock:
    clock = NodeClock(ms_per_node)
    fake_time = types.SimpleNamespace(perf_counter=clock, monotonic=clock, time=clock, sleep=real_time.sleep)
    monkeypatch.setattr(search.driver, "time", fake_time)
    real_tick = AlphaBeta._tick

    def tick(self: AlphaBeta) -> None:
        clock.nodes += 1
        real_tick(self)

    monkeypatch.setattr(AlphaBeta, "_tick", tick)
    return clock
