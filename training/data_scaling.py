"""How the net's held-out loss falls with the volume of training data.

Trains the same recipe on random shares of the chunk files, always keeping
every held-out file (the trainer picks them by name), so that the held-out
losses of the runs compare directly.  The answer decides whether the next
lever is more data or something else (docs/nnue.md, "data is the lever").

    python -m training.data_scaling --data data/nnue --shares 0.25 0.5 1.0 --seed 5 --out /tmp/scale

The recipe after `--` replaces the default one (the bundled net's first step).
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
from pathlib import Path

from training.nnue_data import holdout_files
from training.chunks import Chunk, list_chunks

#: The bundled net's first step (docs/nnue.md, "How to train a net"): its second, the layer stacks,
#: fine-tunes the first's file and so asks nothing more of the data.
BUNDLED_RECIPE = ["--seed", "1", "--hidden", "512", "--epochs", "10", "--lambda", "0.8", "--mirror",
                  "--weight-decay", "0.05", "--lr", "5e-4", "--layer2", "32", "--buckets", "8"]
HOLDOUT = 0.05


def link_share(paths: list[Chunk], share: float, rng: random.Random, directory: Path) -> int:
    """Link every held-out file and about `share` of the others into `directory`; returns the count."""
    directory.mkdir(parents=True, exist_ok=True)
    for stale in list_chunks(directory):
        stale.source.unlink(missing_ok=True)
    count = 0
    for chunk, held in zip(paths, holdout_files(paths, HOLDOUT)):
        if held or rng.random() < share:
            if chunk.loose:
                (directory / chunk.file_name).symlink_to(chunk.source.resolve())
            else:  # a chunk inside a shard: a file of its own (links need one)
                (directory / chunk.file_name).write_bytes(chunk.read_bytes())
            count += 1
    return count


def kept_loss(log: str) -> tuple[int, float]:
    """The epoch the trainer kept and its held-out loss, read from its log."""
    match = re.search(r"kept epoch (\d+) \(valid loss ([0-9.]+)\)", log)
    if match is None:
        raise RuntimeError("the trainer's log has no 'kept epoch' line")
    return int(match.group(1)), float(match.group(2))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    recipe = BUNDLED_RECIPE
    if "--" in argv:
        recipe = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("data/nnue"))
    parser.add_argument("--shares", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    parser.add_argument("--seed", type=int, default=5, help="seed of the file draw")
    parser.add_argument("--out", type=Path, default=Path("/tmp/data-scaling"))
    args = parser.parse_args(argv)

    paths = list_chunks(args.data)
    rng = random.Random(args.seed)
    print("| share | files | distinct positions | kept epoch | held-out loss |")
    print("|---|---|---|---|---|")
    for share in args.shares:
        directory = args.out / f"share-{share:g}"
        files = link_share(paths, share, rng, directory)
        run = subprocess.run([sys.executable, "-m", "training.nnue", "--data", str(directory),
                              "--out", str(args.out / f"share-{share:g}.nnue"), *recipe],
                             capture_output=True, text=True, check=True)
        (args.out / f"share-{share:g}.log").write_text(run.stderr)
        positions = re.search(r"(\d+) distinct positions", run.stderr)
        epoch, loss = kept_loss(run.stderr)
        print(f"| {share:g} | {files} | {positions.group(1) if positions else '?'} | {epoch} | {loss:.6f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
