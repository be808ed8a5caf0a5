"""Texel tuning: fit the evaluation weights to the results of played games.

    python -m training.tuner data/selfplay-2000.pgn.gz --out /tmp/tuned_weights.py

Quiet positions are taken from the games (see `quiet_positions` in
training/tuning_data.py) and labelled with the game's result from White's point of
view (1, 0.5, 0).  Given the game phase, the evaluation of `eval/evaluate.py`
is linear in its weights (material, piece-square tables, bishop pair and
pawn structure, middlegame and endgame), so every position becomes one
sparse row of coefficients, `features(board)` in training/tuning_features.py,
with

    evaluation for White (without tempo) == row . weights   (up to rounding).

The tuner then

1. fits Texel's scale K so that sigmoid(K * eval) best predicts the results
   with the current weights (tempo included, as the engine sees it);
2. minimises   mean((sigmoid(K * eval) - result)^2) + l2 * |w - w_current|^2
   over the weights with L-BFGS (scipy), K fixed.  Unless --l2 is given, the
   strength l2 is chosen from a grid by the error on held-out games (the split
   is by game, so the positions of one game never sit on both sides), or
   with --folds N by N-fold cross-validation over the training games, which
   leaves the held-out games untouched for the final figures;
3. rounds to integers and writes a module in the layout of eval/weights.py
   (diagrams from White's side, rank 8 first), with the data's provenance and
   the errors before and after in its docstring.

With --search-weight LAMBDA the fit aims at (1 - LAMBDA) * result + LAMBDA *
sigmoid(K' * search score), the `[%eval]` of each move (a common way to
reduce the noise of game results); errors are still reported against results.

PHASE_WEIGHT and TEMPO are not tuned; the king's material stays 0 and the
pawn table's ranks 1 and 8 stay 0.  The engine keeps its weights until the
written tables are copied into eval/weights.py (docs/tuning.md).

This module holds the fit, the output and the command line; the names of
training/tuning_data.py and training/tuning_features.py are re-exported here.

Needs numpy and scipy (`pip install -e '.[tune]'`); the engine itself does not.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import random
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence, TextIO

import chess
from tqdm import tqdm

from eval import weights as W
from training.tuning_data import (
    MATE_CP,
    QSEARCH_MARGIN,
    QSEARCH_NODE_LIMIT,
    SKIP_PLIES,
    QuiescenceGap,
    Sample,
    is_quiet,
    quiet_positions,
)
from training.tuning_features import (
    LAYOUT,
    PAWN_STRUCTURE_NAMES,
    PIECE_NAMES,
    STAGES,
    Layout,
    feature_matrix,
    features,
    phase_of,
    sparse_terms,
    tempo_offset,
    untuned_offset,
    white_view,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import scipy.sparse

__all__ = [
    # training/tuning_data.py
    "MATE_CP", "QSEARCH_MARGIN", "QSEARCH_NODE_LIMIT", "SKIP_PLIES",
    "QuiescenceGap", "Sample", "is_quiet", "quiet_positions",
    # training/tuning_features.py
    "LAYOUT", "PAWN_STRUCTURE_NAMES", "PIECE_NAMES", "STAGES", "Layout", "feature_matrix", "features", "phase_of", "sparse_terms",
    "tempo_offset", "untuned_offset", "white_view",
    # this module
    "L2_GRID", "Problem", "cross_validate", "file_provenance", "fit_k", "fit_weights", "main",
    "mean_squared_error", "parse_args", "run", "sigmoid", "split_by_game", "weights_module",
]

#: Candidate regularisation strengths (per centipawn squared) for the validation
#: search.  Not 0: material and the tables' averages are collinear, so an
#: unregularised fit is not even unique.
L2_GRID = (1e-9, 3e-9, 1e-8, 3e-8, 1e-7, 3e-7, 1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3)


# --- fitting -------------------------------------------------------------------

def sigmoid(x: "np.ndarray") -> "np.ndarray":
    import numpy as np

    return 0.5 * (1.0 + np.tanh(0.5 * x))


def mean_squared_error(k: float, scores: "np.ndarray", results: "np.ndarray") -> float:
    import numpy as np

    return float(np.mean((sigmoid(k * scores) - results) ** 2))


def fit_k(scores: "np.ndarray", results: "np.ndarray") -> float:
    """Texel's scale: the K minimising the error of sigmoid(K * score), score in cp."""
    import numpy as np
    from scipy.optimize import minimize_scalar

    best = minimize_scalar(lambda log_k: mean_squared_error(float(np.exp(log_k)), scores, results),
                           bounds=(np.log(1e-5), np.log(0.1)), method="bounded",
                           options={"xatol": 1e-6})
    return float(np.exp(best.x))


@dataclass
class Problem:
    """A design matrix with its offsets and labels."""

    matrix: "scipy.sparse.csr_matrix"
    offsets: "np.ndarray"
    results: "np.ndarray"

    def scores(self, vector: "np.ndarray") -> "np.ndarray":
        return self.matrix @ vector + self.offsets

    def error(self, k: float, vector: "np.ndarray") -> float:
        return mean_squared_error(k, self.scores(vector), self.results)

    def rows(self, mask: "np.ndarray") -> "Problem":
        return Problem(self.matrix[mask], self.offsets[mask], self.results[mask])


def fit_weights(problem: Problem, k: float, start: "np.ndarray", l2: float,
                max_iterations: int = 500, progress: bool = False, label: str = "fit") -> "np.ndarray":
    """Minimise the mean squared error plus l2 * |w - start|^2 with L-BFGS.

    The optimiser works in pawns (w = start + 100 u) so that its tolerances
    see gradients of a sensible size.
    """
    import numpy as np
    from scipy.optimize import minimize

    matrix, offsets, results = problem.matrix, problem.offsets, problem.results
    transposed = matrix.T.tocsr()
    n = len(results)
    base = matrix @ start + offsets

    def loss_and_gradient(u: np.ndarray) -> tuple[float, np.ndarray]:
        delta = 100.0 * u
        predicted = sigmoid(k * (base + matrix @ delta))
        residual = predicted - results
        loss = float(residual @ residual) / n + l2 * float(delta @ delta)
        inner = residual * predicted * (1.0 - predicted) * (2.0 * k / n)
        gradient = transposed @ inner + 2.0 * l2 * delta
        return loss, 100.0 * gradient

    bar = tqdm(total=max_iterations, desc=label, unit="it", disable=not progress)

    def callback(u: np.ndarray) -> None:
        bar.update()

    result = minimize(loss_and_gradient, np.zeros_like(start), jac=True, method="L-BFGS-B", callback=callback,
                      options={"maxiter": max_iterations, "ftol": 1e-12, "gtol": 1e-9})
    bar.set_postfix_str(f"loss {result.fun:.6f}", refresh=False)
    bar.close()
    return start + 100.0 * result.x


def split_by_game(games: "np.ndarray", fraction: float, seed: int) -> "np.ndarray":
    """Boolean mask of validation rows: a random `fraction` of the games."""
    import numpy as np

    unique = sorted(set(games.tolist()))
    random.Random(seed).shuffle(unique)
    held = set(unique[: int(round(len(unique) * fraction))])
    return np.array([game in held for game in games.tolist()], dtype=bool)


# --- output --------------------------------------------------------------------

def _diagram(name: str, values: Sequence[int]) -> list[str]:
    width = max(4, max(len(str(v)) for v in values) + 1)
    lines = [f"{name} = ["]
    for rank in range(8):
        lines.append("   " + "".join(f"{v:{width}d}," for v in values[8 * rank: 8 * rank + 8]))
    lines.append("]")
    return lines


def weights_module(tables: dict[str, object], docstring: str) -> str:
    """Python source of a weights module in the layout of eval/weights.py."""
    lines = ['"""' + docstring.strip() + "\n" + '"""', "from __future__ import annotations", ""]
    lines.append("#: Piece values (middlegame, endgame), indexed by python-chess piece type.")
    lines.append(f"MATERIAL_MG = {tables['MATERIAL_MG']}")
    lines.append(f"MATERIAL_EG = {tables['MATERIAL_EG']}")
    lines.append("")
    lines.append(f"BISHOP_PAIR_MG = {tables['BISHOP_PAIR_MG']}")
    lines.append(f"BISHOP_PAIR_EG = {tables['BISHOP_PAIR_EG']}")
    lines.append("")
    lines.append("# Piece-square tables as diagrams from White's side (index 0 = a8, 63 = h1).")
    lines.append("# fmt: off")
    for piece_type in chess.PIECE_TYPES:
        for suffix in STAGES:
            name = f"{PIECE_NAMES[piece_type]}_{suffix}"
            lines.extend(_diagram(name, tables[name]))  # type: ignore[arg-type]
    lines.append("# fmt: on")
    lines.append("")
    lines.append("# Pawn structure (eval/pawns.py); passed pawns by rank from their own side.")
    for name in PAWN_STRUCTURE_NAMES:
        lines.append(f"{name} = {tables[name]}")
    return "\n".join(lines) + "\n"


def file_provenance(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return f"{path} ({os.path.getsize(path)} bytes, sha256 {digest.hexdigest()[:16]})"


# --- command line ----------------------------------------------------------------

def run(args: argparse.Namespace, out: TextIO | None = None) -> dict[str, object]:
    """Extract, fit and write as the command line asks; the report goes to `out` (stdout)."""
    import numpy as np

    out = out if out is not None else sys.stdout

    progress = not args.quiet
    stats: dict[str, int] = {}
    samples = quiet_positions(args.pgn, skip_plies=args.skip_plies, qsearch_margin=args.qsearch_margin,
                              max_positions=args.max_positions, progress=progress, stats=stats)
    if len(samples) < 2:
        raise SystemExit("tuner: fewer than two quiet positions in the input")
    print(f"{stats['games']} games, {stats['plies']} plies after the first {args.skip_plies}: "
          f"{stats['noisy']} in check/capture/promotion, {stats['duplicate']} duplicates, "
          f"{stats['qsearch']} dropped by quiescence; {len(samples)} positions", file=out)

    boards = [chess.Board(sample.fen) for sample in samples]
    matrix, offsets = feature_matrix(boards, progress=progress)
    problem = Problem(matrix, offsets, np.array([sample.result for sample in samples]))
    start = np.array(LAYOUT.vector(W), dtype=float)

    # The features must reproduce the engine's evaluation (a cheap guard against drift).
    check = random.Random(args.seed).sample(range(len(boards)), min(200, len(boards)))
    for row in check:
        expected = white_view(boards[row]) - offsets[row]
        predicted = float((matrix[row] @ start)[0])
        if abs(predicted - expected) >= 1.0:
            raise AssertionError(f"features disagree with evaluate(): {predicted} vs {expected} in {samples[row].fen}")

    games = np.array([sample.game for sample in samples])
    validation = split_by_game(games, args.validation, args.seed) if args.validation > 0 else np.zeros(len(samples), bool)
    train = problem.rows(~validation)
    held = problem.rows(validation) if validation.any() else None
    print(f"train {int((~validation).sum())} positions, validation {int(validation.sum())} positions "
          f"({len(set(games[validation].tolist()))} games)", file=out)

    k = fit_k(train.scores(start), train.results)
    print(f"K = {k:.6f} per cp (Texel's 10-based form: K = {k * 400 / np.log(10):.4f} with 1/(1+10^(-K*s/400)))",
          file=out)

    def errors(vector: np.ndarray) -> tuple[float, float | None]:
        return train.error(k, vector), (held.error(k, vector) if held is not None else None)

    def fmt(pair: tuple[float, float | None]) -> str:
        return f"train {pair[0]:.6f}" + (f", validation {pair[1]:.6f}" if pair[1] is not None else "")

    before = errors(start)
    print(f"current weights: {fmt(before)}", file=out)

    # What the fit aims at: the results, or a blend with the engine's search scores.
    target, labels = train, "game results"
    if args.search_weight > 0:
        search = np.array([np.nan if s.search is None else s.search for s in samples])[~validation]
        known = ~np.isnan(search)
        if not known.any():
            raise SystemExit("tuner: --search-weight needs [%eval] comments in the PGN")
        k_search = fit_k(search[known], train.results[known])
        blended = train.results.copy()
        blended[known] = ((1 - args.search_weight) * train.results[known]
                          + args.search_weight * sigmoid(k_search * search[known]))
        target = Problem(train.matrix, train.offsets, blended)
        labels = (f"{1 - args.search_weight:g} x game result + {args.search_weight:g} x sigmoid({k_search:.6f} x [%eval])"
                  f" ({int(known.sum())} of {len(known)} training positions have an [%eval])")
    print(f"fitting to {labels}; errors are always against game results", file=out)

    cross_validation = None
    if args.l2 is not None:
        l2 = args.l2
        chosen = "given"
    elif args.folds > 1:
        l2, cv_error = cross_validate(target, train, games[~validation], k, start, args, out)
        chosen = f"chosen by {args.folds}-fold cross-validation over the training games"
        # Without a fit the cross-validation error is the training error of the current weights.
        cross_validation = (f"{args.folds}-fold cross-validation error (game results): "
                            f"{before[0]:.6f} with the current weights, {cv_error:.6f} with l2 = {l2:g}")
        print(cross_validation, file=out)
    elif held is None:
        raise SystemExit("tuner: choose --l2 when there is no validation split")
    else:
        print("choosing l2 by validation error:", file=out)
        best = None
        for candidate in L2_GRID:
            fitted = fit_weights(target, k, start, candidate, args.iterations, progress, f"l2={candidate:g}")
            pair = errors(np.round(fitted))
            print(f"  l2 = {candidate:<8g} {fmt(pair)}", file=out)
            if best is None or pair[1] < best[0]:  # type: ignore[operator]
                best = (pair[1], candidate)
        l2 = best[1]  # type: ignore[index]
        chosen = "chosen by the validation error"
    fitted = np.round(fit_weights(target, k, start, l2, args.iterations, progress, f"l2={l2:g}"))
    after = errors(fitted)
    print(f"l2 = {l2:g}; tuned weights (rounded): {fmt(after)}", file=out)

    tables = LAYOUT.tables(fitted)
    print("material mg " + " ".join(f"{W.MATERIAL_MG[p]}->{tables['MATERIAL_MG'][p]}" for p in range(1, 6)), file=out)  # type: ignore[index]
    print("material eg " + " ".join(f"{W.MATERIAL_EG[p]}->{tables['MATERIAL_EG'][p]}" for p in range(1, 6)), file=out)  # type: ignore[index]
    print(f"bishop pair {W.BISHOP_PAIR_MG}->{tables['BISHOP_PAIR_MG']} / {W.BISHOP_PAIR_EG}->{tables['BISHOP_PAIR_EG']}",
          file=out)

    command = "python -m training.tuner " + " ".join(sys.argv[1:]) if args.command is None else args.command
    docstring = "\n".join([
        "Texel-tuned evaluation weights, written by training/tuner.py: do not edit by hand.",
        "",
        "The engine does not import it: copy its tables into eval/weights.py (which",
        "keeps PHASE_WEIGHT and TEMPO) after a match says they play better; see docs/tuning.md.",
        "",
        f"Command: {command}",
        "Data: " + "; ".join(file_provenance(path) for path in args.pgn),
        f"Positions: {len(samples)} quiet positions from {stats['games']} games "
        f"(first {args.skip_plies} plies skipped, deduplicated by FEN"
        + (f", quiescence gap <= {args.qsearch_margin} cp" if args.qsearch_margin is not None else "") + ").",
        f"Split: {int((~validation).sum())} training / {int(validation.sum())} validation positions (by game, seed {args.seed}).",
        f"Labels: {labels}.",
        f"K = {k:.6f} per centipawn; l2 = {l2:g} per centipawn squared ({chosen}), toward the previous weights.",
        f"Mean squared error before: {fmt(before)}",
        f"Mean squared error after:  {fmt(after)}",
    ] + ([cross_validation[0].upper() + cross_validation[1:] + "."] if cross_validation else []))
    with open(args.out, "w") as handle:
        handle.write(weights_module(tables, docstring))
    print(f"wrote {args.out}", file=out)
    return {"k": k, "l2": l2, "before": before, "after": after, "positions": len(samples), "stats": stats}


def cross_validate(target: Problem, train: Problem, games: "np.ndarray", k: float, start: "np.ndarray",
                   args: argparse.Namespace, out: TextIO) -> tuple[float, float]:
    """(l2, its error): the l2 of L2_GRID with the least pooled error over `args.folds` folds of games.

    `target` holds the labels fitted to, `train` the game results the error is
    measured against (the same rows).
    """
    import numpy as np

    unique = sorted(set(games.tolist()))
    random.Random(args.seed).shuffle(unique)
    fold_of_game = {game: number % args.folds for number, game in enumerate(unique)}
    folds = np.array([fold_of_game[game] for game in games.tolist()])
    print(f"choosing l2 by {args.folds}-fold cross-validation over {len(unique)} training games:", file=out)
    bar = tqdm(total=len(L2_GRID) * args.folds, desc="cross-val", unit="fit", disable=args.quiet)
    best: tuple[float, float] | None = None
    for candidate in L2_GRID:
        squared = 0.0
        for fold in range(args.folds):
            bar.set_postfix_str(f"l2 = {candidate:g}, fold {fold + 1}/{args.folds}")
            inside = folds == fold
            fitted = np.round(fit_weights(target.rows(~inside), k, start, candidate, args.iterations))
            squared += train.rows(inside).error(k, fitted) * int(inside.sum())
            bar.update()
        error = squared / len(games)
        if best is None or error < best[0]:
            best = (error, candidate)
        bar.write(f"  l2 = {candidate:<8g} cross-validation error {error:.6f}", file=out)
    bar.close()
    assert best is not None
    return best[1], best[0]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m training.tuner", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pgn", nargs="+", help="PGN files of finished games (.pgn or .pgn.gz)")
    parser.add_argument("--out", required=True, help="weights module to write (e.g. /tmp/tuned_weights.py)")
    parser.add_argument("--l2", type=float, default=None,
                        help="regularisation toward the current weights, per cp^2 (default: chosen by validation)")
    parser.add_argument("--validation", type=float, default=0.1, help="fraction of games held out (default 0.1)")
    parser.add_argument("--max-positions", type=int, default=None, help="stop reading after this many positions")
    parser.add_argument("--skip-plies", type=int, default=SKIP_PLIES, help=f"plies skipped per game (default {SKIP_PLIES})")
    parser.add_argument("--qsearch-margin", type=int, default=QSEARCH_MARGIN, metavar="CP",
                        help="drop positions whose quiescence score differs from the static one by more than CP "
                             f"(default {QSEARCH_MARGIN})")
    parser.add_argument("--no-qsearch-filter", dest="qsearch_margin", action="store_const", const=None,
                        help="keep positions whatever quiescence search says")
    parser.add_argument("--search-weight", type=float, default=0.0, metavar="LAMBDA",
                        help="fit to (1-LAMBDA) x result + LAMBDA x sigmoid(K' x [%%eval]) instead of the bare result "
                             "(default 0); validation errors stay against results")
    parser.add_argument("--folds", type=int, default=0, metavar="N",
                        help="choose l2 by N-fold cross-validation over the training games instead of by the "
                             "validation split, which then stays untouched (default: off)")
    parser.add_argument("--iterations", type=int, default=500, help="L-BFGS iteration limit per fit (default 500)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the validation split")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--command", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not 0 <= args.validation < 1:
        parser.error("--validation must be in [0, 1)")
    if not 0 <= args.search_weight <= 1:
        parser.error("--search-weight must be in [0, 1]")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    try:
        import numpy  # noqa: F401
        import scipy  # noqa: F401
    except ImportError:
        print("tuner: needs numpy and scipy (pip install -e '.[tune]')", file=sys.stderr)
        return 2
    run(parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
