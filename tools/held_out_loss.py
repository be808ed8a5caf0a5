"""Held-out loss of net files on today's data, per source, without training anything.

The trainer prints the held-out loss of the net it makes and of its
`--compare` nets, on the target it trained for.  This asks the same question
of any nets at any time: on the files the trainer holds out (chosen by a hash
of their names, so the same files every session), the loss of each net as
the engine plays it, overall and per source (play, self, sf, tree), on the
target `--lambda` and `--play-results` define.  So a net trained on another
target (say with `--play-results`) is also scored on the bundled net's, and
nets of earlier sessions on the data as it is now.

    python -m tools.held_out_loss eval/default.nnue OTHER.nnue [--play-results] [--lambda 0.8]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from eval import nnue
from training.nnue import cp_as_played
from training.nnue_data import LAMBDA, holdout_files, load_chunks, targets
from training.nnue_net import played_loss
from training.chunks import chunk_name, list_chunks


def losses(net: nnue.Net, records: np.ndarray, kinds: np.ndarray, target: np.ndarray) -> dict[str, float]:
    """The net's loss as played, on all `records` ("all") and on each source's."""
    cp = cp_as_played(net, records)
    result = {"all": played_loss(cp, target)}
    for kind in sorted(set(kinds.tolist())):
        chosen = kinds == kind
        result[kind] = played_loss(cp[chosen], target[chosen])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nets", nargs="+", type=Path, help="net files (eval/default.nnue is the bundled one)")
    parser.add_argument("--data", type=Path, default=Path("data/nnue"))
    parser.add_argument("--holdout", type=float, default=0.05, help="the trainer's held-out share of files")
    parser.add_argument("--lambda", dest="teacher_share", type=float, default=LAMBDA,
                        help=f"the teacher's share of the target (default {LAMBDA})")
    parser.add_argument("--play-results", action="store_true",
                        help="score play positions against their games' inferred results too (training.nnue's flag)")
    args = parser.parse_args(argv)
    try:
        nets = [nnue.load(path) for path in args.nets]
    except nnue.NetError as error:
        parser.error(str(error))
    paths = list_chunks(args.data)
    held_files = holdout_files(paths, args.holdout)
    if not held_files.any():
        parser.error(f"no held-out files under {args.data}")
    # All files, de-duplicated as the trainer loads them: a held-out file's
    # position that a training file holds too is a training position there.
    records, files = load_chunks(paths, play_results=args.play_results)
    held = held_files[files]
    records = records[held]
    kinds = np.array([chunk_name(path).split("-")[0] for path in paths])[files[held]]
    target = targets(records, args.teacher_share)
    print(f"{len(records)} held-out positions from {int(held_files.sum())} files; target {args.teacher_share:g} teacher"
          f" + {1 - args.teacher_share:g} result{' (play results inferred)' if args.play_results else ''}")
    for path, net in zip(args.nets, nets):
        result = losses(net, records, kinds, target)
        print(f"{path}: " + "  ".join(f"{kind} {loss:.6f}" for kind, loss in result.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
