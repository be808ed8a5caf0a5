"""tools/held_out_loss.py: a net scores nothing lost on its own evaluations, much on their negation, per source."""
from __future__ import annotations

from pathlib import Path

import pytest

from eval import nnue
from tests.test_score_scale import boards
from tools import held_out_loss
from training.chunks import list_chunks, write_chunk
from training.nnue_data import holdout_files
from training.records import RESULT_UNKNOWN, Record

BUNDLED = Path(nnue.__file__).with_name("default.nnue")


def test_a_net_loses_nothing_on_its_own_scores_and_much_on_their_negation(tmp_path: Path, capsys) -> None:
    net = nnue.load(BUNDLED)
    positions = boards(40, seed=5)
    write_chunk(tmp_path / "play-0000.psd.xz",
                [Record(board, net.evaluate(board), RESULT_UNKNOWN) for board in positions[:20]])
    write_chunk(tmp_path / "tree-0000.psd.xz",
                [Record(board, -net.evaluate(board) - 300, RESULT_UNKNOWN) for board in positions[20:]])
    assert held_out_loss.main([str(BUNDLED), "--data", str(tmp_path), "--holdout", "1.0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("40 held-out positions from 2 files")
    words = lines[1].split()
    loss = {kind: float(value) for kind, value in zip(words[1::2], words[2::2])}
    assert loss["play"] < 1e-6  # its own scores, unknown results: the target is the teacher alone
    assert loss["tree"] > 0.01
    assert loss["play"] < loss["all"] < loss["tree"]


def test_no_held_out_files_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        held_out_loss.main([str(BUNDLED), "--data", str(tmp_path)])


def test_a_position_a_training_file_also_holds_is_not_held_out(tmp_path: Path, capsys) -> None:
    """As the trainer loads the data: de-duplicated over all files, the first occurrence kept."""
    net = nnue.load(BUNDLED)
    positions = boards(30, seed=7)
    names = [f"play-{index:04d}.psd.xz" for index in range(40)]
    for name in names:
        (tmp_path / name).write_bytes(b"")
    chunks = list_chunks(tmp_path)
    held = {chunk.file_name: is_held for chunk, is_held in zip(chunks, holdout_files(chunks, 0.5))}
    for name in names:
        (tmp_path / name).unlink()
    trained = next(name for name in names if not held[name])
    kept = next(name for name in names if held[name] and name > trained)
    write_chunk(tmp_path / trained, [Record(board, net.evaluate(board), RESULT_UNKNOWN) for board in positions[:20]])
    write_chunk(tmp_path / kept, [Record(board, net.evaluate(board), RESULT_UNKNOWN) for board in positions[10:]])
    assert held_out_loss.main([str(BUNDLED), "--data", str(tmp_path), "--holdout", "0.5"]) == 0
    # positions[10:20] are in the training file first: only positions[20:] are held out.
    assert capsys.readouterr().out.splitlines()[0].startswith("10 held-out positions from 1 files")
