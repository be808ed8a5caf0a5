"""The data-scaling measurement keeps every held-out file and draws the rest."""

from __future__ import annotations

import random
import re
import shlex
from pathlib import Path

import pytest

from training.chunks import Chunk, list_chunks
from training.data_scaling import BUNDLED_RECIPE, kept_loss, link_share
from training.nnue_data import holdout_files


def _chunks(directory: Path, count: int) -> list[Chunk]:
    directory.mkdir()
    for index in range(count):
        (directory / f"play-{index:04d}.psd.gz").write_bytes(b"")
    return list_chunks(directory)


def test_every_held_out_file_is_kept_and_share_zero_keeps_only_those(tmp_path: Path) -> None:
    paths = _chunks(tmp_path / "data", 400)
    held = {chunk.file_name for chunk, h in zip(paths, holdout_files(paths, 0.05)) if h}
    assert held, "400 names should hold some out"
    assert link_share(paths, 0.0, random.Random(1), tmp_path / "none") == len(held)
    assert {p.name for p in (tmp_path / "none").iterdir()} == held
    count = link_share(paths, 0.5, random.Random(1), tmp_path / "half")
    linked = {p.name for p in (tmp_path / "half").iterdir()}
    assert held <= linked and count == len(linked)
    assert len(held) + 140 < count < len(held) + 240  # about half of the ~380 others
    assert link_share(paths, 1.0, random.Random(1), tmp_path / "all") == 400


def test_relinking_a_directory_replaces_the_old_draw(tmp_path: Path) -> None:
    paths = _chunks(tmp_path / "data", 100)
    link_share(paths, 1.0, random.Random(1), tmp_path / "d")
    assert link_share(paths, 0.0, random.Random(1), tmp_path / "d") == len(list((tmp_path / "d").iterdir())) < 100


def test_kept_loss_reads_the_trainer_log() -> None:
    assert kept_loss("epoch 3: ...\nkept epoch 8 (valid loss 0.006397)\n") == (8, 0.006397)
    with pytest.raises(RuntimeError):
        kept_loss("no such line")


def test_the_default_recipe_is_the_bundled_nets_first_step() -> None:
    """docs/nnue.md's first training command, less where it reads and writes, is the default recipe."""
    docs = (Path(__file__).resolve().parent.parent / "docs" / "nnue.md").read_text(encoding="utf-8")
    command = re.search(r"python -m training\.nnue (.*?)\n(?!  )", docs.replace("\\\n", ""), re.S)
    assert command is not None
    words = shlex.split(command.group(1))
    for flag, takes_value in (("--data", True), ("--out", True), ("--compare", True), ("--no-progress", False)):
        at = words.index(flag)
        del words[at:at + 1 + takes_value]
    assert words == BUNDLED_RECIPE
