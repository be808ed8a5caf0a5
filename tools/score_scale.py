"""Does a net keep the centipawn scale the rest of the engine assumes?

The WDL model (`UCI_ShowWDL`), annotate's blunder thresholds, the strength
limit and the pruning margins were all fitted to the classical evaluation's
scale. A net whose scores are, say, 30% larger would shift every one of them,
and the issue asks for a refit in that case. This script answers the question
for one net on the held-out positions of the training data (the files the
trainer never learns from): it fits the net's score on the classical one by
least squares, and the teacher's label on each, where |classical| < 1000.
A slope near 1 means no refit is needed.

    python -m tools.score_scale --data data/nnue [--net NET] [--limit 20000]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from eval import nnue
from eval.evaluate import evaluate as classical_evaluate
from training.nnue_data import holdout_files
from training.chunks import list_chunks, read_chunk
from training.records import MATE_SCORE

#: Beyond this the scores are decided positions, where the scale matters little and outliers weigh most.
WINDOW_CP = 1000


def held_out_scores(data: Path, net: nnue.Net, share: float, limit: int) -> np.ndarray:
    """Rows of (classical, net, teacher) for up to `limit` held-out positions, side to move's view."""
    paths = list_chunks(data)
    chosen = [path for path, held in zip(paths, holdout_files(paths, share)) if held]
    rows = []
    for path in chosen:
        for record in read_chunk(path):
            if abs(record.score) >= MATE_SCORE:
                continue
            rows.append((classical_evaluate(record.board), net.evaluate(record.board), record.score))
            if len(rows) >= limit:
                return np.array(rows, dtype=float)
    return np.array(rows, dtype=float)


def fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Slope and intercept of the least-squares line y = slope * x + intercept."""
    slope, intercept = np.polyfit(x, y, 1)
    return float(slope), float(intercept)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/nnue"))
    parser.add_argument("--net", type=Path, default=None, help="net file (default: the bundled net)")
    parser.add_argument("--holdout", type=float, default=0.05, help="the trainer's held-out share of files")
    parser.add_argument("--limit", type=int, default=20_000)
    args = parser.parse_args(argv)
    try:
        net = nnue.load(args.net) if args.net else nnue.bundled_net()
    except nnue.NetError as error:
        parser.error(str(error))
    if net is None:
        parser.error("no net: the bundled one is missing or unusable")
    rows = held_out_scores(args.data, net, args.holdout, args.limit)
    if len(rows) == 0:
        parser.error(f"no held-out positions under {args.data}")
    rows = rows[np.abs(rows[:, 0]) < WINDOW_CP]
    classical, learned, teacher = rows.T
    print(f"{len(rows)} held-out positions with |classical| < {WINDOW_CP} cp")
    print(f"standard deviation: classical {classical.std():.0f} cp, net {learned.std():.0f} cp, "
          f"teacher {teacher.std():.0f} cp")
    for name, (x, y) in {"net on classical": (classical, learned),
                         "teacher on classical": (classical, teacher),
                         "teacher on net": (learned, teacher)}.items():
        slope, intercept = fit(x, y)
        print(f"{name:22s} slope {slope:.3f}  intercept {intercept:+.1f} cp")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
