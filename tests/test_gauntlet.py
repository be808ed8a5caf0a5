"""tools.gauntlet: a rating fitted to matches against engines of known rating, checked on figures worked out by hand."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from tools import gauntlet
from tools.gauntlet import Match, fit, read_match


def test_an_even_score_against_one_anchor_is_its_rating() -> None:
    rating, se = fit([Match("a", 2000, 10, 10, 20)])
    assert rating == pytest.approx(2000, abs=0.01)
    # information K^2 * 40 * 1/4 with K = ln 10 / 400: se = 400 / (ln 10 * sqrt(10))
    assert se == pytest.approx(400 / (math.log(10) * math.sqrt(10)))


def test_a_score_of_three_quarters_against_one_anchor_is_its_performance() -> None:
    match = Match("a", 1800, 30, 10, 0)
    rating, _ = fit([match])
    assert rating == pytest.approx(1800 + 400 * math.log10(3), abs=0.01)  # +190.8
    assert match.performance == pytest.approx(rating, abs=0.01)


def test_the_fit_lies_between_the_performances_and_explains_the_points() -> None:
    matches = [Match("weak", 1800, 70, 20, 10), Match("strong", 2600, 5, 85, 10)]
    rating, _ = fit(matches)
    assert matches[0].performance < rating < matches[1].performance  # 1991 < 2051 < 2218
    assert gauntlet.expected(rating, matches) == pytest.approx(75 + 10, abs=1e-6)  # points: 75 + 10


def test_every_game_won_is_a_bound_not_a_number() -> None:
    sweep = Match("a", 1500, 8, 0, 0)
    assert fit([sweep]) is None
    # winning 8 of 8 has a 2.5% chance at p = 0.025 ** (1/8) = .631: 1500 + 400 log10(.631 / .369) = 1593
    bound = 1500 + 400 * math.log10(0.025 ** (1 / 8) / (1 - 0.025 ** (1 / 8)))
    assert gauntlet.sweep_bound([sweep], won=True) == pytest.approx(bound, abs=0.01)
    assert round(bound) == 1593
    text = gauntlet.report("p", [sweep])
    assert "| > 1593 |" in text and "p: above 1593 (8 games, every game won" in text
    lost = Match("a", 1500, 0, 8, 0)
    assert gauntlet.sweep_bound([lost], won=False) == pytest.approx(3000 - bound, abs=0.01)
    assert "p: below 1407" in gauntlet.report("p", [lost])


def test_the_engine_may_be_either_side_of_the_log_and_names_are_checked() -> None:
    anchors = {"phalanx": 2644.0}
    assert read_match("pawnstorm vs phalanx: games 10, +2 -7 =1, score 25.0%", "pawnstorm", anchors) == \
        Match("phalanx", 2644, 2, 7, 1)
    assert read_match("phalanx vs pawnstorm: games 10, +2 -7 =1, score 75.0%", "pawnstorm", anchors) == \
        Match("phalanx", 2644, 7, 2, 1)
    with pytest.raises(ValueError, match="no --anchor for sjeng"):
        read_match("pawnstorm vs sjeng: games 2, +1 -1 =0", "pawnstorm", anchors)
    with pytest.raises(ValueError, match="no games against phalanx"):
        read_match("pawnstorm vs phalanx: games 0, +0 -0 =0", "pawnstorm", anchors)
    with pytest.raises(ValueError, match="no result line"):
        read_match("nothing here", "pawnstorm", anchors)


def test_main_prints_the_table_and_refuses_a_log_without_an_anchor(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "a.log").write_text("[1/2] ...\npawnstorm vs hoichess: games 20, +14 -4 =2, score 75.0%\n")
    (tmp_path / "b.log").write_text("phalanx vs pawnstorm: games 20, +15 -3 =2, score 80.0%\n")
    argv = ["--engine", "pawnstorm", "--anchor", "hoichess=1798", "--anchor", "phalanx=2644",
            str(tmp_path / "a.log"), str(tmp_path / "b.log")]
    assert gauntlet.main(argv) == 0
    out = capsys.readouterr().out
    assert "| hoichess | 1798 | 20 | +14 -4 =2 | 75.0% |" in out and "| phalanx | 2644 | 20 | +3 -15 =2 | 20.0% |" in out
    assert "pawnstorm: " in out and "(40 games, the anchors' ratings fixed)" in out
    assert gauntlet.main(argv[:4] + argv[6:]) == 2
    assert "no --anchor for phalanx" in capsys.readouterr().err
