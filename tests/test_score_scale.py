"""tools/score_scale.py: the slopes it reports are the least-squares slopes of the scores."""
from __future__ import annotations

import random
from pathlib import Path

import chess
import pytest

from eval.evaluate import evaluate
from tools import score_scale
from training.chunks import write_chunk
from training.records import Record


def boards(count: int, seed: int) -> list[chess.Board]:
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        board = chess.Board()
        for _ in range(rng.randrange(4, 40)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if board.is_valid() and abs(evaluate(board)) < score_scale.WINDOW_CP // 2:
            found.append(board.copy(stack=False))
    return found


def test_teacher_twice_the_classical_score_has_slope_two(tmp_path: Path, capsys) -> None:
    records = [Record(board, 2 * evaluate(board) + 7, 1) for board in boards(60, seed=3)]
    write_chunk(tmp_path / "a.psd.gz", records)
    assert score_scale.main(["--data", str(tmp_path), "--holdout", "1.0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"60 held-out positions with |classical| < {score_scale.WINDOW_CP} cp"
    teacher = next(line for line in lines if line.startswith("teacher on classical"))
    assert teacher.split()[4:] == ["2.000", "intercept", "+7.0", "cp"], teacher


def test_no_held_out_positions_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        score_scale.main(["--data", str(tmp_path)])
