"""tools/held_out_loss.py: a net scores nothing lost on its own evaluations, much on their negation, per source."""
from __future__ import annotations

from pathlib import Path

import pytest

from eval import nnue
from tests.test_score_scale import boards
from tools import held_out_loss
from training.chunks import write_chunk
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
