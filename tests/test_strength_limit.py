"""UCI_LimitStrength / UCI_Elo: fewer nodes and a human-like choice among good lines."""
from __future__ import annotations

import random
from collections import Counter

import chess
import chess.engine
import pytest

from search.strength import CALIBRATION, ELO_MAX, ELO_MIN, NNUE_CALIBRATION, StrengthLimit, limit_for, setting_for
from tests.test_client import MIDDLEGAME
from tests.test_uci_protocol import uci  # noqa: F401 (fixture)

E2E4, D2D4, C2C4, G2G4 = (chess.Move.from_uci(uci) for uci in ("e2e4", "d2d4", "c2c4", "g2g4"))


@pytest.mark.parametrize("learned", [False, True])
def test_stronger_settings_search_more_and_push_less(learned: bool) -> None:
    settings = [StrengthLimit(elo, learned) for elo in [*range(ELO_MIN, ELO_MAX, 100), ELO_MAX - 1]]
    nodes = [setting.nodes() for setting in settings]
    weakness = [setting.weakness() for setting in settings]
    assert nodes == sorted(nodes) and nodes[0] < nodes[-1]
    assert weakness == sorted(weakness, reverse=True) and 0 < weakness[-1] < weakness[0] < 128
    assert StrengthLimit(ELO_MIN - 500, learned).nodes() == StrengthLimit(ELO_MIN, learned).nodes()


def test_the_calibrations_pass_through_their_points_and_extend_along_their_end_segments() -> None:
    for calibration in (CALIBRATION, NNUE_CALIBRATION):
        for setting, elo in calibration:
            assert setting_for(elo, calibration) == pytest.approx(setting)
        settings = [setting_for(elo, calibration) for elo in range(ELO_MIN, ELO_MAX + 1, 10)]
        assert settings == sorted(settings)
    bent = ((1000, 1000), (1100, 1200), (1200, 1300))  # 2 Elo a unit, then 1
    assert [setting_for(elo, bent) for elo in (900, 1100, 1250, 1400)] == pytest.approx([950, 1050, 1150, 1300])


def test_the_net_gets_fewer_nodes_for_the_same_elo() -> None:
    """Its nodes are worth more (docs/strength-limit.md), above about 1110 where the calibrations cross."""
    for elo in range(1150, ELO_MAX, 50):
        assert StrengthLimit(elo, learned=True).nodes() <= StrengthLimit(elo).nodes()
        if elo < 1730:  # (from there the classical one plays its top setting; the net's from about 2020)
            assert StrengthLimit(elo, learned=True).nodes() < StrengthLimit(elo).nodes()


@pytest.mark.parametrize("learned", [False, True])
def test_the_top_of_the_range_is_full_strength(learned: bool) -> None:
    assert limit_for(ELO_MAX, learned) is None and limit_for(ELO_MAX + 500, learned) is None
    assert limit_for(ELO_MAX - 1, learned) == StrengthLimit(ELO_MAX - 1, learned)
    assert limit_for(ELO_MIN, learned) == StrengthLimit(ELO_MIN, learned)


def choices(elo: int, lines: list[tuple[chess.Move, int]], trials: int = 2000) -> Counter:
    rng = random.Random(7)
    limit = StrengthLimit(elo)
    return Counter(limit.choose(lines, rng) for _ in range(trials))


def test_close_alternatives_are_sometimes_played_by_weak_settings() -> None:
    lines = [(E2E4, 30), (D2D4, 25), (C2C4, 10), (G2G4, -40)]
    weak, strong = choices(ELO_MIN, lines), choices(ELO_MAX, lines)
    assert weak[E2E4] > weak[G2G4]
    assert weak[E2E4] < 2000  # the weak setting does not always play the best move
    assert strong[E2E4] > weak[E2E4]


def test_a_clearly_losing_move_is_never_chosen() -> None:
    lines = [(E2E4, 50), (D2D4, 40), (C2C4, 30), (G2G4, -900)]
    assert choices(ELO_MIN, lines)[G2G4] == 0


def test_single_line_and_mates_are_played_as_found() -> None:
    assert choices(ELO_MIN, [(E2E4, 0)], trials=50) == Counter({E2E4: 50})
    assert choices(ELO_MIN, [(E2E4, 31990), (D2D4, 100)], trials=50) == Counter({E2E4: 50})


def test_limited_engine_keeps_to_its_node_budget(engine) -> None:
    budget = StrengthLimit(1500, learned=True).nodes()  # the engine plays with the bundled net
    engine.configure({"UCI_LimitStrength": True, "UCI_Elo": 1500, "OwnBook": False})
    board = chess.Board(MIDDLEGAME)
    result = engine.play(board, chess.engine.Limit(time=5), info=chess.engine.INFO_ALL)
    assert result.move in board.legal_moves
    # The search looks at the clock and node count every 64 nodes (depth 1,
    # which is finished whatever the budget, costs far less here).
    assert result.info["nodes"] <= budget + 64
    assert result.info.get("multipv", 1) == 1  # candidate lines are not shown


def searches_with_the_limit(uci, monkeypatch, elo: int, learned: bool = True) -> list[tuple[int | None, dict]]:
    """(node budget, search options) of one `go depth 6` with UCI_LimitStrength on at `elo` (in
    process: what is handed to the search is seen directly; `info nodes` only shows finished depths)."""
    searches = []
    search = uci.engine.searcher.search

    def spy(board, limits, **options):
        searches.append((limits.nodes, options))
        return search(board, limits, **options)

    monkeypatch.setattr(uci.engine.searcher, "search", spy)
    for line in ("setoption name UCI_LimitStrength value true", f"setoption name UCI_Elo value {elo}",
                 "setoption name OwnBook value false", f"setoption name Use NNUE value {str(learned).lower()}",
                 "position startpos", "go depth 6"):
        uci.send(line)
    uci.wait_for_bestmoves()
    return searches


@pytest.mark.parametrize("learned", [True, False])
def test_the_budget_follows_the_evaluation_in_use(uci, monkeypatch, learned: bool) -> None:
    """The net's calibration with `Use NNUE` on, the classical one with it off."""
    budgets = [nodes for nodes, _ in searches_with_the_limit(uci, monkeypatch, 1500, learned)]
    assert budgets == [StrengthLimit(1500, learned).nodes()]
    assert budgets[0] != StrengthLimit(1500, not learned).nodes()


def test_the_top_request_searches_as_the_unlimited_engine(uci, monkeypatch) -> None:
    [(below_nodes, below)] = searches_with_the_limit(uci, monkeypatch, ELO_MAX - 1)
    assert below_nodes == StrengthLimit(ELO_MAX - 1, learned=True).nodes() and not below["helpers"]
    monkeypatch.undo()
    [(nodes, options)] = searches_with_the_limit(uci, monkeypatch, ELO_MAX)
    assert nodes is None and options["helpers"] and options["multipv"] == 1


def test_limited_engine_finds_a_mate_in_one(engine) -> None:
    engine.configure({"UCI_LimitStrength": True, "UCI_Elo": ELO_MIN, "OwnBook": False})
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    for _ in range(5):
        assert engine.play(board, chess.engine.Limit(time=1)).move == chess.Move.from_uci("d1d8")


def test_a_node_limited_search_still_returns_every_candidate_line() -> None:
    """The budget usually stops a depth midway; the choice needs the last full depth's lines."""
    from search.driver import Searcher
    from search.strength import CANDIDATE_LINES
    from search.timeman import Limits

    for budget in (StrengthLimit(ELO_MIN).nodes(), StrengthLimit(1500).nodes(), 3001):
        result = Searcher(1).search(chess.Board(MIDDLEGAME), Limits(nodes=budget, min_depth=1),
                                    multipv=CANDIDATE_LINES)
        assert len(result.lines) == CANDIDATE_LINES, budget
        assert len({line.pv[0] for line in result.lines}) == CANDIDATE_LINES
