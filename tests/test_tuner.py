"""The Texel tuner: quiet-position filter (training/tuning_data.py), features
(training/tuning_features.py), fit and CLI (training/tuner.py)."""
from __future__ import annotations

import importlib.util
import io
import random
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest
from hypothesis import given, settings

from eval import weights as W
from training.tuning_data import is_quiet, quiet_positions
from training.tuning_features import LAYOUT, PAWN_STRUCTURE_NAMES, features, untuned_offset, white_view
from tests.strategies import boards

try:
    import numpy as np
    import scipy  # noqa: F401
except ImportError:  # pragma: no cover - the test extra installs both
    np = None  # type: ignore[assignment]
needs_numpy = pytest.mark.skipif(np is None, reason="numpy/scipy not installed (pip install -e '.[tune]')")

START = LAYOUT.vector(W)


def _dot(row: dict[int, float], vector: list[float]) -> float:
    return sum(coefficient * vector[slot] for slot, coefficient in row.items())


@settings(max_examples=150, deadline=None)
@given(board=boards(max_plies=120))
def test_features_times_weights_is_the_white_view_evaluation(board: chess.Board) -> None:
    expected = white_view(board) - untuned_offset(board)
    assert abs(_dot(features(board), START) - expected) < 1.0


@pytest.mark.parametrize("fen", [
    "QQQQkQQQ/8/8/8/8/8/8/4K2Q w - - 0 1",          # phase far above 24: taper caps it
    "4k3/8/8/8/8/8/8/4K3 w - - 0 1",                 # bare kings: phase 0
    "2b1kb2/8/8/8/8/8/8/2B1KB2 b - - 0 1",           # both bishop pairs
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2k5/8/1P1P4/8/pp6/6P1/4K3 b - - 0 1",         # passed pawns both sides, kings near them
    "4k3/pp4p1/1p6/8/8/P7/P1P2PPP/4K3 w - - 0 1",    # doubled, isolated and connected pawns
])
def test_features_on_corner_cases(fen: str) -> None:
    board = chess.Board(fen)
    assert abs(_dot(features(board), START) - (white_view(board) - untuned_offset(board))) < 1.0


def test_layout_has_no_slot_for_fixed_weights_and_round_trips() -> None:
    names = set(LAYOUT.names)
    assert "MATERIAL_MG[KING]" not in names and "MATERIAL_EG[KING]" not in names
    assert "PAWN_MG[a8]" not in names and "PAWN_EG[h1]" not in names and "PAWN_MG[e4]" in names
    assert "PASSED_MG[0]" not in names and "PASSED_EG[7]" not in names and "PASSED_EG[6]" in names
    # material, bishop pair, tables, then passed pawns (ranks 2-7), three (mg, eg) pawn terms, king proximity
    assert len(LAYOUT) == 2 * 5 + 2 + 2 * (48 + 5 * 64) + 2 * 6 + 3 * 2 + 2
    tables = LAYOUT.tables(START)
    assert tables["MATERIAL_MG"] == W.MATERIAL_MG and tables["KNIGHT_EG"] == W.KNIGHT_EG
    assert tables["PAWN_MG"] == W.PAWN_MG and tables["BISHOP_PAIR_EG"] == W.BISHOP_PAIR_EG
    assert tables["PASSED_MG"] == W.PASSED_MG and tables["PASSED_EG"] == W.PASSED_EG
    for name in ("ISOLATED", "DOUBLED", "CONNECTED", "KING_PROXIMITY"):
        assert tables[name] == getattr(W, name)


def _pgn(*games: tuple[str, str]) -> str:
    text = []
    for moves, result in games:
        text.append(f'[Event "t"]\n[Result "{result}"]\n\n{moves} {result}\n')
    return "\n".join(text)


def test_quiet_filter_drops_checks_captures_promotions_and_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "games.pgn"
    line = "1. e4 d5 2. exd5 Qxd5 3. Nc3 Qe5+ 4. Be2 Nf6 5. Nf3 Qc5 6. O-O e6"
    path.write_text(_pgn((line, "1-0"), (line, "0-1"), ("1. e4 e5 2. Nf3 Nc6", "*")))
    stats: dict[str, int] = {}
    samples = quiet_positions([str(path)], skip_plies=0, stats=stats)
    assert stats["games"] == 2  # the unfinished game is ignored
    fens = [chess.Board(s.fen) for s in samples]
    assert all(not board.is_check() for board in fens)
    played = chess.Board()
    for san in line.replace(".", " ").split():
        if san.isdigit():
            continue
        move = played.parse_san(san)
        kept = any(board == played for board in fens)
        assert kept == is_quiet(played, move), played.fen()
        played.push(move)
    # exd5 and Qxd5 are captures, the position after Qe5+ is in check (in each game).
    assert stats["noisy"] == 2 * 3 and stats["duplicate"] == 9
    assert len(samples) == 9 and {s.result for s in samples} == {1.0}
    assert is_quiet(chess.Board("8/4P3/8/8/8/8/k7/4K3 w - - 0 1"), chess.Move.from_uci("e1d2"))
    assert not is_quiet(chess.Board("8/4P3/8/8/8/8/k7/4K3 w - - 0 1"), chess.Move.from_uci("e7e8q"))


def test_quiet_filter_skips_opening_plies_and_limits_positions(tmp_path: Path) -> None:
    path = tmp_path / "games.pgn"
    path.write_text(_pgn(("1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. c3 Nf6 5. d3 d6", "1/2-1/2")))
    assert len(quiet_positions([str(path)], skip_plies=8)) == 2
    assert len(quiet_positions([str(path)], skip_plies=0, max_positions=3)) == 3


def test_gzipped_pgn_reads_like_the_plain_one(tmp_path: Path) -> None:
    import gzip

    text = _pgn(("1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. c3 Nf6 5. d3 d6", "1/2-1/2"), ("1. d4 d5 2. c4 e6", "0-1"))
    plain, packed = tmp_path / "games.pgn", tmp_path / "games.pgn.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    assert quiet_positions([str(packed)], skip_plies=2) == quiet_positions([str(plain)], skip_plies=2)
    assert len(quiet_positions([str(packed)], skip_plies=2)) == 8 + 2


def test_samples_carry_the_search_score_of_the_move_played(tmp_path: Path) -> None:
    path = tmp_path / "games.pgn"
    path.write_text(_pgn(("1. e4 { [%eval 0.35] } 1... e5 { [%eval -0.20] } 2. Nf3 { [%eval #3] } 2... Nc6", "1-0")))
    samples = quiet_positions([str(path)], skip_plies=0)
    assert [s.search for s in samples] == [35, -20, 10_000 - 3, None]
    assert [s.game for s in samples] == [0, 0, 0, 0]


def test_quiescence_filter_drops_a_hanging_queen(tmp_path: Path) -> None:
    # 2...Qg5?? puts the queen en prise to Bxg5: quiet by the move played, not by quiescence.
    path = tmp_path / "games.pgn"
    path.write_text(_pgn(("1. e4 e5 2. d4 Qg5 3. Nf3 Qf6", "1-0")))
    kept = {s.fen.split(" ")[0] for s in quiet_positions([str(path)], skip_plies=0, qsearch_margin=50)}
    after_qg5 = chess.Board("rnb1kbnr/pppp1ppp/8/4p1q1/3PP3/8/PPP2PPP/RNBQKBNR w KQkq - 1 3")
    assert after_qg5.board_fen() not in kept  # Bxg5 wins the queen
    assert chess.Board().board_fen() in kept
    everything = quiet_positions([str(path)], skip_plies=0, qsearch_margin=None)
    assert after_qg5.board_fen() in {s.fen.split(" ")[0] for s in everything}


def test_reading_positions_draws_a_progress_bar_only_when_asked(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.pgn"
    path.write_text(_pgn(("1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5", "1-0")))
    quiet_positions([str(path)], skip_plies=0, progress=True)
    err = capsys.readouterr().err
    assert "positions: 100%" in err and "1 games, 6 positions" in err  # the whole file read, the counts beside
    quiet_positions([str(path)], skip_plies=0)
    assert capsys.readouterr().err == ""


def test_tuner_still_exports_the_names_of_its_helper_modules() -> None:
    """What moved to training/tuning_data.py and training/tuning_features.py stays importable from training.tuner."""
    import training.tuner as tuner
    import training.tuning_data as data
    import training.tuning_features as feats

    moved = [name for name in tuner.__all__ if hasattr(data, name) or hasattr(feats, name)]
    assert {"quiet_positions", "Sample", "LAYOUT", "features", "feature_matrix"} <= set(moved)
    for name in tuner.__all__:
        assert hasattr(tuner, name), name
    for name in moved:
        assert getattr(tuner, name) is getattr(data if hasattr(data, name) else feats, name), name


def _random_boards(count: int, seed: int) -> list[chess.Board]:
    rng = random.Random(seed)
    result = []
    while len(result) < count:
        board = chess.Board()
        for _ in range(rng.randrange(10, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if not board.is_game_over():
            result.append(chess.Board(board.fen()))
    return result


@needs_numpy
def test_feature_matrix_matches_the_per_board_features() -> None:
    from training.tuning_features import feature_matrix

    sample = _random_boards(40, seed=3)
    matrix, offsets = feature_matrix(sample)
    start = np.array(START)
    for row, board in enumerate(sample):
        assert matrix[row].toarray()[0] @ start == pytest.approx(_dot(features(board), START))
        assert offsets[row] == pytest.approx(untuned_offset(board))
        assert abs(matrix[row] @ start + offsets[row] - white_view(board))[0] < 1.0


@needs_numpy
def test_fit_moves_the_weights_toward_the_ones_that_made_the_labels() -> None:
    from training.tuner import Problem, fit_k, fit_weights, sigmoid
    from training.tuning_features import feature_matrix

    sample = _random_boards(600, seed=7)
    matrix, offsets = feature_matrix(sample)
    start = np.array(START)
    truth = start.copy()
    knight_mg, rook_eg = LAYOUT.material[0][chess.KNIGHT], LAYOUT.material[1][chess.ROOK]
    truth[knight_mg] += 120
    truth[rook_eg] -= 100
    truth[LAYOUT.pair[0]] += 60
    k = 0.006
    labels = sigmoid(k * (matrix @ truth + offsets))  # expected results under the true weights
    problem = Problem(matrix, offsets, labels)

    assert fit_k(problem.scores(truth), labels) == pytest.approx(k, rel=1e-3)
    fitted = fit_weights(problem, k, start, l2=1e-9, max_iterations=300)
    assert problem.error(k, fitted) < 0.1 * problem.error(k, start)
    assert np.linalg.norm(fitted - truth) < 0.5 * np.linalg.norm(start - truth)
    for slot in (knight_mg, rook_eg, LAYOUT.pair[0]):
        assert abs(fitted[slot] - truth[slot]) < 0.5 * abs(start[slot] - truth[slot])
    # Strong regularisation keeps the weights where they were.
    held = fit_weights(problem, k, start, l2=1.0, max_iterations=300)
    assert np.abs(held - start).max() < 1.0


def _random_game_pgn(rng: random.Random, result: str) -> str:
    board = chess.Board()
    game = chess.pgn.Game()
    node = game
    for _ in range(rng.randrange(30, 70)):
        moves = list(board.legal_moves)
        if not moves:
            break
        move = rng.choice(moves)
        node = node.add_variation(move)
        node.set_eval(chess.engine.PovScore(chess.engine.Cp(rng.randrange(-300, 300)), chess.WHITE))
        board.push(move)
    game.headers["Result"] = result
    return str(game)


@needs_numpy
@pytest.mark.parametrize("options", [
    ["--validation", "0.34"],
    ["--validation", "0.34", "--folds", "2", "--search-weight", "0.5", "--no-qsearch-filter"],
    ["--validation", "0", "--l2", "1e-6", "--search-weight", "1"],
])
def test_cli_runs_end_to_end_and_writes_a_usable_weights_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str]
) -> None:
    from training.tuner import main

    rng = random.Random(11)
    pgn = tmp_path / "tiny.pgn"
    pgn.write_text("\n\n".join(_random_game_pgn(rng, r) for r in ["1-0", "0-1", "1/2-1/2", "1-0", "0-1", "1-0"]))
    out = tmp_path / "tuned.py"
    status = main([str(pgn), "--out", str(out), "--iterations", "20", "--quiet", "--max-positions", "150", *options])
    assert status == 0
    report = capsys.readouterr().out
    assert "K = " in report and "current weights: train" in report and f"wrote {out}" in report
    if "--folds" in options:
        assert "2-fold cross-validation" in report
    if "--search-weight" in options:
        assert "x sigmoid(" in report

    spec = importlib.util.spec_from_file_location("tuned_for_test", out)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _check_weights_module(module)
    # Copied into eval/weights.py, the tables must still be colour-symmetric.
    mg = W._signed_tables([[], module.PAWN_MG, module.KNIGHT_MG, module.BISHOP_MG, module.ROOK_MG, module.QUEEN_MG,
                           module.KING_MG], module.MATERIAL_MG)
    for piece_type in chess.PIECE_TYPES:
        for square in chess.SQUARES:
            assert mg[chess.BLACK][piece_type][chess.square_mirror(square)] == -mg[chess.WHITE][piece_type][square]
    assert "Texel-tuned" in (module.__doc__ or "") and "sha256" in (module.__doc__ or "")


def _check_weights_module(module: object) -> None:
    for suffix in ("MG", "EG"):
        material = getattr(module, f"MATERIAL_{suffix}")
        assert len(material) == 7 and material[0] == 0 and material[chess.KING] == 0
        assert all(isinstance(v, int) for v in material)
        assert isinstance(getattr(module, f"BISHOP_PAIR_{suffix}"), int)
        for piece in ("PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING"):
            table = getattr(module, f"{piece}_{suffix}")
            assert len(table) == 64 and all(isinstance(v, int) for v in table)
        pawn = getattr(module, f"PAWN_{suffix}")
        assert pawn[:8] == [0] * 8 and pawn[56:] == [0] * 8
        passed = getattr(module, f"PASSED_{suffix}")
        assert len(passed) == 8 and passed[0] == passed[7] == 0 and all(isinstance(v, int) for v in passed)
    # The pawn-structure pairs, which go into eval/weights.py with the tables.
    for name in PAWN_STRUCTURE_NAMES:
        if name.startswith("PASSED_"):
            continue  # the tables by rank, checked above
        pair = getattr(module, name)
        assert len(pair) == 2 and all(isinstance(v, int) for v in pair)
