"""Fit the WDL model of `eval/wdl.py` to games whose moves carry scores.

    python -m training.wdl_fit data/selfplay-2000.pgn.gz [more.pgn ...]

Every move with a `[%eval]` comment (as written by tools/selfplay.py) gives
one sample: the score from White's view, the material count, and how the
game ended.  The four constants are found by maximum likelihood of the three
outcomes; the script prints them ready to paste into eval/wdl.py, with a
calibration table (predicted against observed score per score bucket).

Needs numpy and scipy (`pip install -e '.[tune]'`); the engine itself does not.
"""
from __future__ import annotations

import argparse
import sys
from typing import Iterator

from eval.wdl import A0, A1, B0, B1, material
from training.pgn import finished_games, mainline_positions

#: Scores beyond this carry little information about draws and are mostly
#: decided games still being played out.
SCORE_LIMIT = 1500
#: The opening plies come from the EPD, not from the engine's judgement.
SKIP_PLIES = 4


def samples(paths: list[str]) -> Iterator[tuple[int, int, float]]:
    """(score for White, material, White's result) for every scored move of the decided games."""
    for game, result in finished_games(paths):
        for ply, board, node in mainline_positions(game):
            score = node.eval()
            if ply >= SKIP_PLIES and score is not None and not score.is_mate():
                white = score.white().score()
                if white is not None and abs(white) <= SCORE_LIMIT:
                    yield white, material(board), result


def fit(data: list[tuple[int, int, float]]) -> tuple[float, float, float, float]:
    import numpy as np
    from scipy.optimize import minimize

    score = np.array([d[0] for d in data], dtype=float)
    count = np.array([d[1] for d in data], dtype=float)
    result = np.array([d[2] for d in data], dtype=float)
    won, lost, drawn = result == 1.0, result == 0.0, result == 0.5

    def negative_log_likelihood(params: np.ndarray) -> float:
        a0, a1, b0, b1 = params
        a = a0 + a1 * count
        b = np.maximum(b0 + b1 * count, 1.0)
        win = 1 / (1 + np.exp((a - score) / b))
        loss = 1 / (1 + np.exp((a + score) / b))
        draw = np.clip(1 - win - loss, 1e-9, 1)
        eps = 1e-12
        return -float(np.sum(np.log(win[won] + eps)) + np.sum(np.log(loss[lost] + eps)) + np.sum(np.log(draw[drawn])))

    start = np.array([A0, A1, B0, B1])
    best = minimize(negative_log_likelihood, start, method="Nelder-Mead",
                    options={"maxiter": 4000, "xatol": 1e-3, "fatol": 1e-3})
    return tuple(float(x) for x in best.x)  # type: ignore[return-value]


def calibration(data: list[tuple[int, int, float]], params: tuple[float, float, float, float]) -> str:
    """Observed and predicted White score per score bucket (one line each)."""
    from eval.wdl import win_probability

    lines = ["bucket (cp)      n  observed  predicted"]
    for low in range(-600, 600, 100):
        chosen = [d for d in data if low <= d[0] < low + 100]
        if not chosen:
            continue
        observed = sum(d[2] for d in chosen) / len(chosen)
        predicted = sum(win_probability(d[0], d[1], params) + 0.5 * (1 - win_probability(d[0], d[1], params)
                        - win_probability(-d[0], d[1], params)) for d in chosen) / len(chosen)
        lines.append(f"[{low:+5d},{low + 100:+5d}) {len(chosen):6d}  {observed:8.3f}  {predicted:9.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pgn", nargs="+")
    args = parser.parse_args(argv)
    data = list(samples(args.pgn))
    print(f"{len(data)} scored positions")
    params = fit(data)
    print("A0, A1 = {:.1f}, {:.3f}\nB0, B1 = {:.1f}, {:.3f}".format(*params))
    print(calibration(data, params))
    return 0


if __name__ == "__main__":
    sys.exit(main())
