"""Train the NNUE (`eval.nnue`) from labelled positions (`training.datagen`).

    python -m training.nnue --data data/nnue --out eval/default.nnue \
        --hidden 128 --epochs 12 --seed 1

numpy + scipy on the CPU: the input layer is a sparse (positions x 768)
matrix per perspective, built batch by batch from the records (`Inputs`),
so a batch costs two sparse-dense products forward and two backward, and
memory stays near the records' 32 bytes a position.  `--threads` (default
2) share each batch.

Target, in win-probability space: ``LAMBDA * sigmoid(score / K) + (1 - LAMBDA) * result``
with ``result`` 1 / 0.5 / 0 for the side to move, the teacher's score clamped
to +-SCORE_CLAMP, LAMBDA = 0.8 (mostly the teacher, whose label is exact for
the position; the game result corrects the teacher's horizon) and K = 400 cp.
The loss is the mean squared error between that target and
``sigmoid(cp / K)`` of the net's own score, so the net speaks centipawns on
the teacher's scale, and decoupled weight decay (``--weight-decay``) pulls
the weights of rarely seen features back to zero.  The epoch with the lowest
held-out loss is kept.
``--layer2 L`` puts a second hidden layer of L float32 units before the
output; ``--buckets B`` trains B output heads, one per material bucket
(`eval.nnue`, version 3), sharing the feature transformer, and with
``--stacks`` a second layer per bucket as well (version 4).
``--init NET`` starts from a net file's
weights instead of random ones (fine-tuning: a related net in a few epochs
instead of the whole run; `FloatNet.start_from`).

Duplicates across chunk files are dropped on loading (key: pieces and side
to move).  A fixed share of the chunk files (by a hash of the file name, so
whole games) is held out; its loss is printed every epoch, overall and per
source (sf, self, tree).  Positions whose game result is unknown (tree
chunks; play chunks unless ``--play-results`` infers their games' results
from how each ended, `training.nnue_data.play_game_results`) take the
teacher's score alone as the target.  The
float net is quantised to integers (`eval.nnue` format); the quantisation
error on the held-out positions is printed at the end.  What the trainer
makes of the chunk files (records, targets, inputs) is `training.nnue_data`;
the float net, its passes and its quantisation are `training.nnue_net`.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from eval.nnue import Net, NetError
from eval.nnue import load as load_net
from training.nnue_data import (K, LAMBDA, RECORD_DTYPE, SCORE_CLAMP, Inputs,  # noqa: F401 (re-exported)
                                feature_matrices, holdout_files, holdout_mask, load_chunks, load_records,
                                output_buckets, piece_codes, targets)
from training.nnue_net import (CP_SCALE, QA, QB, SLICE_ROWS, FloatNet, played_loss, quantise,  # noqa: F401 (re-exported)
                                quantised_cp)
from training.chunks import chunk_name, list_chunks
from training.records import DataFormatError


# --- the run ------------------------------------------------------------------

def train(records: np.ndarray, hidden: int, epochs: int, batch: int, lr: float, seed: int,
          holdout: float = 0.05, progress: bool = True, log=print,
          weight_decay: float = 0.0, held: np.ndarray | None = None,
          groups: dict[str, np.ndarray] | None = None, teacher_share: float = LAMBDA,
          mirror: bool = False, buckets: int = 1, layer2: int = 0, threads: int = 2,
          second_drop: bool = False, stacks: bool = False, init: Net | None = None) -> tuple[FloatNet, dict[str, float]]:
    """Train a net on `records`.

    `held` marks the validation positions (default: `holdout` of them by a
    hash of the position); `groups` names subsets whose held-out loss is
    printed too (e.g. one per data source); `threads` share each batch
    (`batch_step`).
    """
    rng = np.random.default_rng(seed)
    if held is None:
        held = holdout_mask(records, holdout)
    inputs = Inputs(records)
    target = targets(records, teacher_share)
    bucket = output_buckets(records, buckets)
    train_idx, valid_idx = np.nonzero(~held)[0], np.nonzero(held)[0]
    if mirror:  # the training positions' mirrored twins join as rows n.. 2n-1 (never the held-out ones)
        target, bucket = np.concatenate([target, target]), np.concatenate([bucket, bucket])
        train_idx = np.concatenate([train_idx, train_idx + len(records)])
    net = FloatNet(hidden, rng, buckets, layer2, stacks)
    if init is not None:  # fine-tuning: epoch 0's loss is then `init`'s own (up to its quantisation)
        net.start_from(init)
    stats = {"train_positions": len(train_idx), "valid_positions": len(valid_idx)}

    def loss_of(rows: np.ndarray, chunk: int = SLICE_ROWS) -> float:
        """Mean loss over `rows`, their inputs built a chunk at a time."""
        total = 0.0
        for start in range(0, len(rows), chunk):
            part = rows[start:start + chunk]
            stm, other = inputs(part)
            total += net.loss(stm, other, target[part], bucket[part]) * len(part)
        return total / len(rows)

    def group_losses() -> str:
        parts = []
        for name, members in (groups or {}).items():
            chosen = np.nonzero(members & held)[0]
            if len(chosen):
                parts.append(f"{name} {loss_of(chosen):.6f}")
        return f"  ({', '.join(parts)})" if parts else ""

    if len(valid_idx):
        stats["valid_0"] = loss_of(valid_idx)
        log(f"epoch 0: valid loss {stats['valid_0']:.6f}" + group_losses())
    best = (stats.get("valid_0", float("inf")), {key: value.copy() for key, value in net.params.items()}, 0)
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    with ThreadPoolExecutor(threads) as pool, _blas_alone(threads):
        for epoch in range(1, epochs + 1):
            order = rng.permutation(train_idx)
            rate = learning_rate(epoch, epochs, lr, second_drop)
            batches = range(0, len(order), batch)
            bar = tqdm(batches, desc=f"epoch {epoch}", unit="batch", leave=False) if (tqdm and progress) else batches
            total = 0.0
            for start in bar:
                chosen = order[start:start + batch]
                loss, grads = batch_step(net, inputs, chosen, target, bucket, pool, threads)
                net.adam(grads, rate, weight_decay)
                total += loss * len(chosen)
            valid = loss_of(valid_idx) if len(valid_idx) else float("nan")
            log(f"epoch {epoch}: train loss {total / len(order):.6f}  valid loss {valid:.6f}" + group_losses())
            stats[f"valid_{epoch}"] = valid
            if not valid >= best[0]:  # also takes the first epoch when there is no held-out set (nan)
                best = (valid, {key: value.copy() for key, value in net.params.items()}, epoch)
    if len(valid_idx):
        net.params = best[1]
        log(f"kept epoch {best[2]} (valid loss {best[0]:.6f})")
    stats["best_epoch"] = best[2]
    stats["valid_loss"] = stats.get(f"valid_{best[2]}", float("nan"))
    return net, stats


def learning_rate(epoch: int, epochs: int, lr: float, second_drop: bool = False) -> float:
    """The step size of `epoch` (1-based): `lr`, then 0.3 of it for the last quarter of the epochs.

    The drop is where the held-out loss falls most (session 48: 0.002507 to
    0.002381 in the first epoch at 0.3x, then flat), so `second_drop` adds a
    further step, 0.09x, for the last tenth of the epochs (at least the last one).
    """
    if second_drop and epoch > min(epochs * 0.9, epochs - 1):
        return lr * 0.09
    return lr * (0.3 if epoch > epochs * 0.75 else 1.0)


def _blas_alone(threads: int) -> contextlib.AbstractContextManager:
    """BLAS held to one thread of its own while `threads` > 1 Python threads share each batch.

    OpenBLAS's own threads and ours fight over the 2 cores: a 512-unit step
    took 34 ms with 2 BLAS threads beside 2 of ours, and 22 ms with 1
    (docs/nnue.md session 40).  Without threadpoolctl (the `tune` extra) BLAS
    is left as it is.
    """
    if threads == 1:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def batch_step(net: FloatNet, inputs: Inputs, rows: np.ndarray, target: np.ndarray, bucket: np.ndarray, pool: ThreadPoolExecutor, threads: int) -> tuple[float, dict[str, np.ndarray]]:
    """The loss and gradients of the batch `rows`, in `threads` slices on the pool's threads.

    Why threads: a step is mostly scipy's sparse products, building the
    sparse inputs and numpy's passes over the accumulators, each on one core
    with the GIL released, so slices of a batch run side by side (about 1.6x
    on 2 cores, docs/nnue.md session 40).  Each slice's gradients are its
    mean's, so weighted by the slice's share they sum to the batch's: the
    step is the one-thread step up to rounding.
    """
    def one(part: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        stm, other = inputs(part)
        return net.loss_and_grads(stm, other, target[part], bucket[part])

    if threads == 1:
        return one(rows)
    parts = [part for part in np.array_split(rows, threads) if len(part)]
    results = list(pool.map(one, parts))
    shares = [len(part) / len(rows) for part in parts]
    loss = sum(share * part_loss for share, (part_loss, _) in zip(shares, results))
    grads = {key: sum(np.float32(share) * part_grads[key] for share, (_, part_grads) in zip(shares, results))
             for key in results[0][1]}
    return loss, grads


def cp_as_played(net: Net, records: np.ndarray) -> np.ndarray:
    """A net file's output on `records` as the engine computes it (centipawns)."""
    stm, other = feature_matrices(records)
    return quantised_cp(net, stm, other, output_buckets(records, net.buckets))


def report_held_out(net: FloatNet, quantised: Net, compared: list[Net], held: np.ndarray,
                    args: argparse.Namespace) -> None:
    """Quantisation error, and the held-out loss as played (output scaled) of the float32
    net, the integer net and each `--compare` net, all on the same positions and targets."""
    stm, other = feature_matrices(held)
    bucket = output_buckets(held, quantised.buckets)
    float_cp = net.cp(stm, other, bucket) * args.correction_scale
    integer_cp = quantised_cp(quantised, stm, other, bucket)
    error = np.abs(float_cp - integer_cp)
    print(f"quantisation error on {len(held)} held-out positions: mean {error.mean():.2f} cp, max {error.max():.1f} cp",
          file=sys.stderr)
    target = targets(held, args.teacher_share)
    print(f"held-out loss as played (output x {args.correction_scale:g}): "
          f"float32 {played_loss(float_cp, target):.6f}, integer {played_loss(integer_cp, target):.6f}",
          file=sys.stderr)
    for other_net in compared:
        cp = cp_as_played(other_net, held)
        print(f"held-out loss as played of {other_net.name} ({other_net.architecture}): "
              f"{played_loss(cp, target):.6f}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("data/nnue"))
    parser.add_argument("--out", type=Path, default=Path("eval/default.nnue"))
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--holdout", type=float, default=0.05)
    parser.add_argument("--lambda", dest="teacher_share", type=float, default=LAMBDA,
                        help=f"the teacher's share of the target (default {LAMBDA}; the game result has the rest)")
    parser.add_argument("--correction-scale", type=float, default=1.0,
                        help="multiply the trained net's output by this when quantising (default 1)")
    parser.add_argument("--mirror", action="store_true", help="add every training position's a<->h mirrored twin")
    parser.add_argument("--buckets", type=int, default=1, choices=range(1, 33), metavar="B",
                        help="output heads, one per material bucket (1 to 32; default 1, the single head)")
    parser.add_argument("--layer2", type=int, default=0, choices=range(0, 257), metavar="L",
                        help="units of a second hidden layer (float32; default 0, none)")
    parser.add_argument("--stacks", action="store_true",
                        help="with --layer2 and --buckets: a second layer per output bucket (layer stacks)")
    parser.add_argument("--init", type=Path, metavar="NET",
                        help="start from this net file's weights instead of random ones (fine-tuning; the "
                             "architecture must match, and with --stacks its shared second layer starts each stack)")
    parser.add_argument("--threads", type=int, default=2, choices=range(1, 65), metavar="T",
                        help="threads sharing each batch (default 2; BLAS then runs on one thread)")
    parser.add_argument("--weight-decay", type=float, default=0.0, help="decoupled weight decay (AdamW) of every weight matrix, not the biases")
    parser.add_argument("--second-drop", action="store_true",
                        help="a second step down of the learning rate (0.09x) for the last tenth of the epochs")
    parser.add_argument("--play-results", action="store_true",
                        help="give the teacher's own games (play chunks) the result of their end, so that "
                             "--lambda blends a result into them too (else they take the teacher alone)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars (they fill a log with carriage returns when stderr is a file)")
    parser.add_argument("--compare", action="append", default=[], type=Path, metavar="NET",
                        help="also print this net file's held-out loss as played, on the same positions")
    args = parser.parse_args(argv)
    if args.stacks and not (args.layer2 and args.buckets > 1):
        print("--stacks ignored: it needs a second layer (--layer2) and output buckets (--buckets)", file=sys.stderr)
        args.stacks = False
    try:
        compared = [load_net(path) for path in args.compare]
        init = load_net(args.init) if args.init else None
        if init is not None:  # refused before the data is read, not an hour later
            FloatNet(args.hidden, np.random.default_rng(0), args.buckets, args.layer2, args.stacks).start_from(init)
    except (NetError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1

    started = time.time()
    paths = list_chunks(args.data)
    try:
        records, files = load_chunks(paths, play_results=args.play_results)
    except DataFormatError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{len(records)} distinct positions from {len(paths)} files", file=sys.stderr)
    held = holdout_files(paths, args.holdout)[files]
    kinds = np.array([chunk_name(path).split("-")[0] for path in paths])[files]
    groups = {kind: kinds == kind for kind in sorted(set(kinds.tolist()))}
    net, stats = train(records, args.hidden, args.epochs, args.batch, args.lr, args.seed, args.holdout,
                       log=lambda line: print(line, file=sys.stderr),
                       weight_decay=args.weight_decay, held=held, groups=groups, teacher_share=args.teacher_share,
                       mirror=args.mirror, buckets=args.buckets, layer2=args.layer2, threads=args.threads,
                       second_drop=args.second_drop, progress=not args.no_progress, stacks=args.stacks, init=init)
    quantised = quantise(net, str(args.out), args.correction_scale)
    if held.any():
        report_held_out(net, quantised, compared, records[held], args)
    quantised.save(args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes) in {time.time() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
