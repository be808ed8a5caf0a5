"""A deterministic clock for the search: time that passes with nodes, not with the machine.

`install_node_clock(monkeypatch, ms_per_node)` replaces the clock the search
driver reads (`search.driver.time`) with one that advances `ms_per_node`
milliseconds per node searched (every node `AlphaBeta` counts), plus
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

    # The tree counts its nodes in `nodes` (inlined in alphabeta and quiescence): every count it
    # adds moves the clock on, before the search looks at the clock at that node.
    def get_nodes(self: AlphaBeta) -> int:
        return self.__dict__.get("_counted_nodes", 0)

    def set_nodes(self: AlphaBeta, value: int) -> None:
        clock.nodes += max(0, value - get_nodes(self))
        self.__dict__["_counted_nodes"] = value

    monkeypatch.setattr(AlphaBeta, "nodes", property(get_nodes, set_nodes), raising=False)
    return clock
