"""The evaluation cache (`Position.evals`) changes how fast a search is, never what it finds."""
from __future__ import annotations

import chess
import pytest

from eval.nnue import Net, bundled_net
from search import position as position_module
from search.alphabeta import AlphaBeta
from search.driver import Searcher
from search.features import Features
from search.position import Position
from search.timeman import Limits
from search.tt import TranspositionTable
from search.types import INFINITY
from tests.test_nnue import NETS, random_net

MIDDLEGAME = chess.Board("r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQ1RK1 w - - 0 8")


class Forgetful(dict):
    """An evaluation cache that never remembers: every lookup misses, so every score is computed."""

    def get(self, key: int, default: int | None = None) -> int | None:
        return default


class Counting(dict):
    """An evaluation cache that counts its hits."""

    hits = 0

    def get(self, key: int, default: int | None = None) -> int | None:
        score = super().get(key, default)
        self.hits += score is not None
        return score


def _search(net: Net | None, evals: dict[int, int], depth: int = 4) -> tuple[int, int, list[chess.Move]]:
    """Score, nodes and principal variation of a fixed-depth search with all of the engine's features."""
    tree = AlphaBeta(Position(MIDDLEGAME.copy(), net, evals), TranspositionTable(1), Features())
    score = tree.alphabeta(depth, -INFINITY, INFINITY, 0)
    return score, tree.nodes, tree.pv[0]


@pytest.mark.parametrize("net_index", [None, 1, 2, 5])
def test_a_search_is_the_same_with_and_without_the_cache(net_index: int | None) -> None:
    net = None if net_index is None else NETS[net_index]
    cache = Counting()
    assert _search(net, cache) == _search(net, Forgetful())
    assert cache.hits > 0, "a depth-4 search revisits positions; the cache should have served some"
    for key, score in list(cache.items())[:50]:
        assert isinstance(key, int) and isinstance(score, int)


def test_cached_scores_are_the_positions_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every score in the cache is what a fresh position evaluates; the cache empties when full."""
    monkeypatch.setattr(position_module, "EVAL_CACHE_ENTRIES", 64)
    net = bundled_net()
    pos = Position(MIDDLEGAME.copy(), net)
    seen: dict[int, int] = {}
    for move in list(pos.board.legal_moves):
        pos.push(move)
        for reply in list(pos.board.legal_moves)[:5]:
            pos.push(reply)
            seen[pos.key] = pos.evaluate()
            assert pos.evaluate() == seen[pos.key] == Position(pos.board.copy(stack=False), net).evaluate()
            pos.pop()
        pos.pop()
        assert len(pos.evals) <= 64
    assert len(seen) > 64


def test_the_searcher_keeps_its_cache_until_the_net_or_the_game_changes() -> None:
    net, other = bundled_net(), random_net(seed=3)
    searcher = Searcher(1, net=net)
    searcher.search(MIDDLEGAME, Limits(depth=3))
    cache = searcher.evals()
    assert cache and searcher.evals() is cache
    searcher.net = other
    assert searcher.evals() is not cache and not searcher.evals()
    # Forget the table and the ordering, not the evaluations: a stale score from
    # the first net would make this search differ from a fresh searcher's.
    searcher.tt.clear()
    searcher.orderer.clear()
    again, fresh = searcher.search(MIDDLEGAME, Limits(depth=3)), Searcher(1, net=other).search(MIDDLEGAME, Limits(depth=3))
    assert (again.score, again.nodes, again.pv) == (fresh.score, fresh.nodes, fresh.pv)
    assert searcher.evals()
    searcher.clear()
    assert not searcher.evals()
