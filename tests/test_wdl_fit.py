"""The WDL fit recovers a known model from outcomes drawn from it."""
from __future__ import annotations

import random

import pytest

from eval.wdl import MATERIAL_MAX, MATERIAL_MIN, win_probability

pytest.importorskip("scipy")

from training.wdl_fit import fit, samples  # noqa: E402


def test_fit_recovers_the_model_that_made_the_outcomes() -> None:
    truth = (120.0, -0.8, 80.0, 1.5)
    rng = random.Random(3)
    data = []
    for _ in range(20_000):
        score = rng.uniform(-800, 800)
        count = rng.randint(MATERIAL_MIN, MATERIAL_MAX)
        win, loss = win_probability(score, count, truth), win_probability(-score, count, truth)
        roll = rng.random()
        data.append((score, count, 1.0 if roll < win else 0.0 if roll < win + loss else 0.5))
    a0, a1, b0, b1 = fit(data)
    for count in (20, 50, 78):
        assert a0 + a1 * count == pytest.approx(truth[0] + truth[1] * count, abs=15)
        assert b0 + b1 * count == pytest.approx(truth[2] + truth[3] * count, abs=15)


def test_samples_read_scores_results_and_material(tmp_path) -> None:
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[Result "1-0"]\n\n1. e4 { [%eval 0.30] } e5 { [%eval 0.25] } 2. Nf3 { [%eval 0.40] } '
                   'Nc6 { [%eval #3] } 3. Bb5 { [%eval 0.50] } 1-0\n')
    got = list(samples([str(pgn)]))
    # The first SKIP_PLIES plies are the opening's, and mate scores are left out.
    assert got == [(50, 78, 1.0)]
