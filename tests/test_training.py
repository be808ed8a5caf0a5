"""The NNUE pipeline on tiny data: record files, the trainer, quantisation.

Past 500 lines on purpose: the trainer's tests share its tiny data builders
(`random_records`, `_matrices`) and check one pipeline end to end, from the
generator's chunks to the engine playing the quantised net.
"""
from __future__ import annotations

import dataclasses
import gzip
import json
import random
import re
import subprocess
from pathlib import Path

import chess
import numpy as np
import pytest

from eval import nnue
from search.position import Position
from tests.conftest import STOCKFISH
from training import datagen
from training import nnue as trainer
from training import nnue_data
from training.chunks import read_chunk, read_raw, write_chunk
from training.records import HEADER_V1 as HEADER, RECORD_SIZE, RESULT_UNKNOWN, DataFormatError, Record

VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500, chess.QUEEN: 900, chess.KING: 0}


def material(board: chess.Board) -> int:
    """The side to move's material balance: the known function the net must learn."""
    return sum(VALUES[p.piece_type] * (1 if p.color == board.turn else -1) for p in board.piece_map().values())


def random_records(count: int, seed: int) -> list[Record]:
    """Positions from random games (with captures), labelled by material."""
    rng = random.Random(seed)
    records = []
    while len(records) < count:
        board = chess.Board()
        for _ in range(rng.randrange(10, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            captures = [m for m in moves if board.is_capture(m)]
            board.push(rng.choice(captures if captures and rng.random() < 0.6 else moves))
        if board.is_valid():
            score = material(board)
            records.append(Record(board.copy(stack=False), score, 2 if score > 150 else 0 if score < -150 else 1))
    return records


def test_records_round_trip(tmp_path: Path) -> None:
    records = random_records(50, seed=1)
    path = tmp_path / "a.psd.gz"
    assert write_chunk(path, records) == 50
    back = read_chunk(path)
    for old, new in zip(records, back):
        assert new.board.board_fen() == old.board.board_fen() and new.board.turn == old.board.turn
        assert (new.score, new.result) == (old.score, old.result)
    first = path.read_bytes()
    write_chunk(path, records)
    assert path.read_bytes() == first  # same records, same bytes


def test_bad_data_files_name_the_file_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "good.psd.gz"
    write_chunk(path, random_records(10, seed=2))
    raw = gzip.decompress(path.read_bytes())
    truncated = tmp_path / "truncated.psd.gz"
    truncated.write_bytes(gzip.compress(raw[:-40]))
    with pytest.raises(DataFormatError, match=rf"truncated.psd.gz: truncated at offset {HEADER.size + 8 * RECORD_SIZE}"):
        read_raw(truncated)
    flipped = tmp_path / "flipped.psd.gz"
    flipped.write_bytes(gzip.compress(raw[:100] + bytes([raw[100] ^ 0xFF]) + raw[101:]))
    with pytest.raises(DataFormatError, match="flipped.psd.gz: checksum mismatch"):
        read_raw(flipped)
    cut = tmp_path / "cut.psd.gz"
    cut.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(DataFormatError, match="cut.psd.gz: cannot decompress"):
        read_raw(cut)


def _matrices(records: list[Record], tmp_path: Path, name: str) -> np.ndarray:
    path = tmp_path / f"{name}.psd.gz"
    write_chunk(path, records)
    return trainer.load_records([path])


def test_quantise_holds_weights_beyond_int16_at_its_bounds() -> None:
    """A bias or output weight past int16 is held at the bound, not wrapped round to the other sign."""
    net = trainer.FloatNet(8, np.random.default_rng(1))
    net.params["b1"][:2] = (1000.0, -1000.0)  # far past 32767 / QA
    net.params["w2"][0, :2] = (100.0, -100.0)  # times QB and the scale of 2: past int16
    quantised = trainer.quantise(net, correction_scale=2.0)
    assert list(quantised.b1[:2]) == [32767, -32767]
    assert list(quantised.w2[0, :2]) == [32767, -32767]


@pytest.mark.slow  # trains a net: 10 s or more
def test_net_learns_material_and_quantises_faithfully(tmp_path: Path) -> None:
    data = _matrices(random_records(3000, seed=3), tmp_path, "train")
    net, stats = trainer.train(data, hidden=16, epochs=12, batch=256, lr=0.01, seed=1, holdout=0.1,
                               progress=False, log=lambda line: None)
    assert stats["valid_5"] < stats["valid_1"] * 0.8 and stats["valid_12"] < stats["valid_5"]  # the loss falls
    test = _matrices(random_records(300, seed=4), tmp_path, "test")
    stm, other = trainer.feature_matrices(test)
    predicted = net.cp(stm, other)
    truth = test["score"].astype(float)
    assert np.corrcoef(predicted, truth)[0, 1] > 0.9  # it has learnt material, on unseen positions
    quantised = trainer.quantise(net)
    error = np.abs(trainer.quantised_cp(quantised, stm, other) - predicted)
    assert error.max() < 15  # centipawns: the stated bound for 8-bit-ish accumulators at this scale
    # And the engine's own arithmetic agrees with the vectorised one.
    boards = [record.board for record in read_chunk(tmp_path / "test.psd.gz")]
    assert [quantised.evaluate(board) for board in boards[:50]] == list(trainer.quantised_cp(quantised, stm, other)[:50])


@pytest.mark.slow  # trains a net: 10 s or more
def test_output_buckets_learn_what_material_changes_and_match_the_engine(tmp_path: Path) -> None:
    """A knight worth +200 with many pieces on the board and -200 with few: the
    bucketed net fits it better than the single head, and the engine picks the
    same bucket as the trainer (its arithmetic equals `quantised_cp`)."""
    def relabel(records: list[Record]) -> list[Record]:
        out = []
        for record in records:
            board = record.board
            knights = len(board.pieces(chess.KNIGHT, board.turn)) - len(board.pieces(chess.KNIGHT, not board.turn))
            sign = 1 if chess.popcount(board.occupied) > 20 else -1
            out.append(Record(board, sign * 200 * knights, 1))
        return out
    data = _matrices(relabel(random_records(3000, seed=9)), tmp_path, "train")
    runs = {buckets: trainer.train(data, hidden=8, epochs=6, batch=256, lr=0.01, seed=1, holdout=0.1, progress=False,
                                   log=lambda line: None, buckets=buckets) for buckets in (1, 4)}
    assert runs[4][1]["valid_loss"] < runs[1][1]["valid_loss"] * 0.9
    net = runs[4][0]
    quantised = trainer.quantise(net)
    assert quantised.buckets == 4 and len(set(quantised.b2)) > 1  # the heads learnt apart
    test = _matrices(relabel(random_records(200, seed=10)), tmp_path, "test")
    stm, other = trainer.feature_matrices(test)
    bucket = trainer.output_buckets(test, 4)
    boards = [record.board for record in read_chunk(tmp_path / "test.psd.gz")]
    assert list(bucket) == [quantised.bucket_of[chess.popcount(board.occupied)] for board in boards]
    assert len(set(bucket.tolist())) >= 3  # the test positions span the buckets
    assert [quantised.evaluate(board) for board in boards] == list(trainer.quantised_cp(quantised, stm, other, bucket))


def test_inputs_built_batch_by_batch_equal_the_whole_set(tmp_path: Path) -> None:
    import scipy.sparse
    data = _matrices(random_records(120, seed=12), tmp_path, "train")
    whole = [scipy.sparse.vstack([plain, twin], format="csr") for plain, twin in
             zip(trainer.feature_matrices(data), trainer.feature_matrices(data, mirror=True))]
    inputs = trainer.Inputs(data)
    rows = np.random.default_rng(1).permutation(2 * len(data))[:70]
    for batch in (rows, rows[rows < len(data)], rows[rows >= len(data)]):
        for built, full in zip(inputs(batch), whole):
            assert (built != full[batch]).nnz == 0 and built.shape == full[batch].shape


def test_the_trainer_command_writes_a_deep_bucketed_net(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for index in range(8):
        write_chunk(data / f"self-{index:04d}.psd.gz", random_records(40, seed=20 + index))
    out = tmp_path / "k4.nnue"
    assert trainer.main(["--data", str(data), "--out", str(out), "--hidden", "8", "--epochs", "1", "--holdout", "0.5",
                         "--buckets", "4", "--mirror", "--correction-scale", "0.5",
                         "--layer2", "4", "--stacks", "--compare", str(nnue.BUNDLED), "--no-progress"]) == 0
    net = nnue.load(out)
    assert (net.buckets, net.hidden, net.deep.size, net.deep.stacks) == (4, 8, 4, 4)
    log = capsys.readouterr().err
    assert "\r" not in log and "batch/s" not in log  # --no-progress keeps the log to lines
    assert "quantisation error on" in log and re.search(r"held-out loss as played \(output x 0.5\): "
                                                        r"float32 0\.\d+, integer 0\.\d+", log), log
    bundled = re.escape(f"default.nnue ({nnue.bundled_net().architecture}): ")
    assert re.search(rf"held-out loss as played of .*{bundled}0\.\d+", log), log
    assert trainer.main(["--data", str(data), "--out", str(out), "--stacks",
                         "--compare", str(tmp_path / "none.nnue")]) == 1
    log = capsys.readouterr().err
    assert "none.nnue: cannot read" in log and "--stacks ignored: it needs a second layer" in log
    assert trainer.main(["--data", str(data), "--out", str(tmp_path / "tuned.nnue"), "--init", str(out)]) == 1
    assert "does not fit the net to train" in capsys.readouterr().err and not (tmp_path / "tuned.nnue").exists()
    assert trainer.main(["--data", str(data), "--out", str(tmp_path / "tuned.nnue"), "--init", str(out), "--hidden",
                         "8", "--epochs", "1", "--holdout", "0.5", "--buckets", "4",
                         "--layer2", "4", "--stacks", "--no-progress", "--compare", str(out)]) == 0
    log = capsys.readouterr().err
    first = float(re.search(r"epoch 0: valid loss (\d\.\d+)", log).group(1))
    played = float(re.search(r"held-out loss as played of \S*k4.nnue \(.*\): (\d\.\d+)", log).group(1))
    assert first == pytest.approx(played, rel=0.01)  # the fine-tuning starts where the file plays


@pytest.mark.slow  # trains a net: 10 s or more
@pytest.mark.parametrize("stacks", [False, True])
def test_a_second_layer_learns_and_the_engine_plays_it(tmp_path: Path, stacks: bool) -> None:
    """With layer stacks too: each bucket's own second layer, as the engine runs it."""
    data = _matrices(random_records(3000, seed=3), tmp_path, "train")
    net, stats = trainer.train(data, hidden=16, epochs=12, batch=256, lr=0.01, seed=1, holdout=0.1, progress=False,
                               log=lambda line: None, layer2=8, buckets=2, stacks=stacks)
    assert net.stacks == (2 if stacks else 1)
    assert stats["valid_12"] < stats["valid_1"] * 0.8  # the loss falls through the extra layer
    test = _matrices(random_records(300, seed=4), tmp_path, "test")
    stm, other = trainer.feature_matrices(test)
    bucket = trainer.output_buckets(test, 2)
    predicted = net.cp(stm, other, bucket)
    assert np.corrcoef(predicted, test["score"].astype(float))[0, 1] > 0.9
    quantised = trainer.quantise(net)
    assert quantised.deep is not None and quantised.deep.size == 8 and quantised.buckets == 2
    assert quantised.deep.stacks == net.stacks
    if stacks:  # both layers learnt, from the same start (train's first draws), and apart
        start = trainer.FloatNet(16, np.random.default_rng(1), buckets=2, layer2=8, stacks=True).params["l2w"]
        assert all(not np.allclose(quantised.deep.weight[stack], start[stack]) for stack in range(2))
        assert not np.allclose(quantised.deep.weight[0], quantised.deep.weight[1])
    batch = trainer.quantised_cp(quantised, stm, other, bucket)
    assert np.abs(batch - predicted).max() < 15
    boards = [record.board for record in read_chunk(tmp_path / "test.psd.gz")]
    engine = [Position(board, quantised).evaluate() for board in boards[:50]]
    assert engine == list(batch[:50])  # exact arithmetic: one at a time scores as the batch


@pytest.mark.parametrize("layer2, stacks", [(0, False), (4, False), (4, True)])
def test_fine_tuning_starts_where_the_net_file_plays(tmp_path: Path, layer2: int, stacks: bool) -> None:
    """`--init`: the float net rebuilt from a net file scores as the engine plays that
    file (to a centipawn or two of rounding); a shared second layer starts every stack;
    a net of another shape is refused by name."""
    data = _matrices(random_records(400, seed=31), tmp_path, "train")
    trained, _ = trainer.train(data, hidden=8, epochs=2, batch=64, lr=0.01, seed=1, holdout=0.2, progress=False,
                               log=lambda line: None, layer2=layer2, buckets=3)
    played = trainer.quantise(trained, "played.nnue")
    stm, other = trainer.feature_matrices(data)
    bucket = trainer.output_buckets(data, 3)
    start = trainer.FloatNet(8, np.random.default_rng(9), buckets=3, layer2=layer2, stacks=stacks)
    start.start_from(played)
    expected = trainer.quantised_cp(played, stm, other, bucket)
    assert np.abs(start.cp(stm, other, bucket) - expected).max() <= 2
    assert np.abs(trainer.FloatNet(8, np.random.default_rng(9), buckets=3, layer2=layer2).cp(
        stm, other, bucket) - expected).max() > 20  # a fresh net does not
    if stacks:
        assert start.params["l2w"].shape[0] == 3 and all(np.array_equal(start.params["l2w"][0], layer)
                                                         for layer in start.params["l2w"])
    with pytest.raises(ValueError, match="played.nnue .* does not fit the net to train .*hidden 6"):
        trainer.FloatNet(6, np.random.default_rng(9), buckets=3, layer2=layer2).start_from(played)


def test_mirrored_twins_are_the_mirrored_positions(tmp_path: Path) -> None:
    """`--mirror`'s twin of a record has the inputs of the a-h mirrored board (sessions 17-21's
    trainer read each twin's pieces from the mirrored squares: half of every epoch was noise)."""
    records = random_records(60, seed=13)
    data = _matrices(records, tmp_path, "plain")
    boards = [record.board for record in read_chunk(tmp_path / "plain.psd.gz")]
    twins = _matrices([Record(board.transform(chess.flip_horizontal), 0, 1) for board in boards], tmp_path, "twins")
    assert len(data) == len(twins) == len(boards)
    for mirrored, plain in zip(trainer.feature_matrices(data, mirror=True), trainer.feature_matrices(twins)):
        assert (mirrored != plain).nnz == 0


@pytest.mark.skipif(STOCKFISH is None, reason="Debian's stockfish (the teacher) is not installed")
def test_datagen_is_deterministic_resumable_and_labels_tree_positions(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Three tiny chunks (self-play, search-tree and teacher-play positions) at a shallow teacher depth."""
    out = tmp_path / "data"
    argv = ["--out", str(out), "--workers", "1", "--seed", "3", "--stockfish", str(STOCKFISH), "--depth", "2",
            "--selfplay-chunks", "1", "--tree-chunks", "1", "--play-chunks", "1", "--chunk-games", "1", "--selfplay-nodes", "60",
            "--no-progress"]
    assert datagen.main(argv) == 0
    files = {path.name: path.read_bytes() for path in out.glob("*.psd.xz")}
    assert set(files) == {"self-0000.psd.xz", "tree-0000.psd.xz", "play-0000.psd.xz"}
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["teacher"].startswith("Stockfish") and provenance["seed"] == 3
    game, tree = read_chunk(out / "self-0000.psd.xz"), read_chunk(out / "tree-0000.psd.xz")
    play = read_chunk(out / "play-0000.psd.xz")
    assert provenance["chunks"]["tree-0000"]["written"] == len(tree) > 0
    assert provenance["chunks"]["play-0000"]["written"] == len(play) > 10
    assert all(record.result in (0, 1, 2) for record in game)
    assert all(record.result == RESULT_UNKNOWN for record in tree + play)  # no game result used
    assert not any(record.board.is_check() for record in game + tree + play)
    # The trees reach positions the game did not.
    assert {r.identity for r in tree} - {r.identity for r in game}
    # Resumed: nothing left to do.  Remade: the same bytes.
    capsys.readouterr()
    assert datagen.main(argv) == 0
    assert "3 done, 0 to make" in capsys.readouterr().err
    for name in ("tree-0000.psd.xz", "play-0000.psd.xz"):
        (out / name).unlink()
    assert datagen.main(argv) == 0
    total = len(game) + len(tree) + len(play)
    assert f"2 chunks made; {total} positions" in capsys.readouterr().err  # said also without progress bar
    for name in ("tree-0000.psd.xz", "play-0000.psd.xz"):
        assert (out / name).read_bytes() == files[name], name
    # A chunk made before version 2 (its .psd.gz file) counts as made.
    old = out / "self-0000.psd.gz"
    write_chunk(old, game)
    (out / "self-0000.psd.xz").unlink()
    assert datagen.main(argv) == 0
    assert "3 done, 0 to make" in capsys.readouterr().err


@pytest.mark.skipif(STOCKFISH is None, reason="Debian's stockfish (the teacher) is not installed")
def test_teacher_labels_a_game_alike_whatever_it_labelled_before() -> None:
    """`new_game` forgets the earlier games: the reproducibility of a chunk rests on it."""
    from training.teacher import Teacher

    def game(seed: int) -> list[chess.Board]:
        rng, board, boards = random.Random(seed), chess.Board(), []
        while len(boards) < 12 and not board.is_game_over():
            board.push(rng.choice(list(board.legal_moves)))
            boards.append(board.copy(stack=False))
        return boards

    fresh, used = Teacher(str(STOCKFISH), 7), Teacher(str(STOCKFISH), 7)
    try:
        fresh.new_game()
        expected = [fresh.label(board) for board in game(1)]
        for seed in (2, 3):
            used.new_game()
            for board in game(seed):
                used.label(board)
        used.new_game()
        assert [used.label(board) for board in game(1)] == expected
    finally:
        fresh.close()
        used.close()


@pytest.mark.skipif(STOCKFISH is None, reason="Debian's stockfish (the teacher) is not installed")
def test_a_chunk_is_the_same_bytes_from_a_fresh_or_a_used_teacher(tmp_path: Path) -> None:
    """A worker's teacher has labelled other chunks before: `run_task` must clear it per game."""
    first, second = tmp_path / "fresh", tmp_path / "used"
    first.mkdir()
    second.mkdir()
    settings = datagen.Settings(first, str(STOCKFISH), 7, 5, None, 2, 8, 2, 60)
    task = datagen.Task("self-0000", "self", 0)
    datagen._start_worker(settings)
    try:
        datagen.run_task(task)
        assert datagen._teacher is not None
        board = chess.Board()
        for move in ["e2e4", "c7c5", "g1f3", "d7d6", "d2d4", "c5d4", "f3d4", "g8f6", "b1c3", "a7a6"]:
            board.push_uci(move)
            datagen._teacher.label(board)  # leaves its hash and histories behind
        datagen._settings = dataclasses.replace(settings, out=second)
        datagen.run_task(task)
    finally:
        datagen._teacher.close()
        datagen._teacher = datagen._settings = None
    assert (first / "self-0000.psd.xz").read_bytes() == (second / "self-0000.psd.xz").read_bytes()


def test_plan_interleaves_sources_and_starts_at_the_first_chunk(tmp_path: Path) -> None:
    settings = datagen.Settings(tmp_path, "stockfish", 8, 1, None, 2, 8, 10, 400)
    names = [task.name for task in datagen.plan(settings, 1, 0, 0, 3)]
    assert names == ["sf-0000", "play-0000", "play-0001", "play-0002"]
    later = datagen.plan(settings, 1, 0, 0, 3, first=1)
    assert [(task.name, task.index) for task in later] == [("play-0001", 1), ("play-0002", 2)]


def test_tree_sampler_draws_evaluated_positions_and_leaves_the_engine_alone() -> None:
    from search.driver import Searcher
    from search.position import Position
    from search.timeman import Limits

    seen: list[str] = []
    sampler = datagen.TreeSampler(random.Random(1))

    class Spy(sampler.position_type):  # type: ignore[misc, valid-type]
        __slots__ = ()

        def evaluate(self) -> int:
            seen.append(self.board.fen())
            return super().evaluate()

    searcher = Searcher(1)
    assert searcher.position_type is Position  # the engine's own searcher evaluates unwatched
    searcher.position_type = Spy
    searcher.search(chess.Board(), Limits(nodes=300))
    assert sampler.seen == len(seen) > 10
    drawn = sampler.take()
    assert drawn is not None and drawn.fen() in seen and sampler.take() is None and sampler.seen == 0


def test_targets_and_file_holdout() -> None:
    records = np.zeros(3, dtype=trainer.RECORD_DTYPE)
    records["score"] = [400, 400, -400]
    records["result"] = [2, RESULT_UNKNOWN, 0]
    teacher = 1 / (1 + np.exp(-1.0))
    expected = [0.8 * teacher + 0.2, teacher, 0.8 * (1 - teacher)]
    assert np.allclose(trainer.targets(records), expected)
    assert np.allclose(trainer.targets(records, teacher_share=1.0), [teacher, teacher, 1 - teacher])
    paths = [Path(f"self-{index:04d}.psd.gz") for index in range(2000)]
    held = trainer.holdout_files(paths, 0.05)
    assert 50 <= held.sum() <= 150  # about 5%, by file
    assert np.array_equal(held, trainer.holdout_files(list(reversed(paths)), 0.05)[::-1])  # not by order


def _play_game(moves: str, final_white_score: int) -> list[Record]:
    """A `play` game's records: each position after the first move (no two games share one, so none is a
    duplicate the loader drops), the last scored `final_white_score` from White's view."""
    board = chess.Board()
    records = []
    for index, san in enumerate(moves.split()):
        if index:
            records.append(Record(board.copy(stack=False), 10 if board.turn else -10, RESULT_UNKNOWN))
        board.push_san(san)
    records.append(Record(board.copy(stack=False), final_white_score if board.turn else -final_white_score,
                          RESULT_UNKNOWN))
    return records


def test_play_games_take_the_result_their_end_tells(tmp_path: Path) -> None:
    won = _play_game("e4 e5 Qh5 Nc6 Bc4 Nf6", 20000)  # White mates next: won for White
    lost = _play_game("d4 d5 c4 e6 Nc3 Nf6 Bg5", -2400)  # Black to move, 2,400 up for Black
    drawn = _play_game("Nf3 Nf6 g3", 40)
    path = tmp_path / "play-0000.psd.xz"
    write_chunk(path, won + lost + drawn)
    tree = tmp_path / "tree-0000.psd.xz"
    write_chunk(tree, _play_game("c4 e5 Nc3", 3000))
    plain, _ = trainer.load_chunks([path, tree])
    assert (plain["result"] == RESULT_UNKNOWN).all()  # unless asked: the teacher alone
    records, files = trainer.load_chunks([path, tree], play_results=True)
    assert nnue_data.game_starts(records[files == 0]).nonzero()[0].tolist() == [0, len(won), len(won) + len(lost)]
    white_first = [record.board.turn for record in won + lost + drawn]
    expected = ([2 if turn else 0 for turn in white_first[:len(won)]]
                + [0 if turn else 2 for turn in white_first[len(won):len(won) + len(lost)]]
                + [1] * len(drawn))
    assert records["result"][files == 0].tolist() == expected
    assert (records["result"][files == 1] == RESULT_UNKNOWN).all()  # a tree position is off the game's line


def test_learning_rate_steps_down_once_or_twice() -> None:
    one = [trainer.learning_rate(epoch, 10, 1.0) for epoch in range(1, 11)]
    assert one == [1.0] * 7 + [0.3] * 3  # the last quarter at 0.3x, as every bundled net was trained
    two = [trainer.learning_rate(epoch, 10, 1.0, second_drop=True) for epoch in range(1, 11)]
    assert two == [1.0] * 7 + [0.3] * 2 + [0.09]
    assert [trainer.learning_rate(epoch, 20, 1.0, second_drop=True) for epoch in (15, 16, 18, 19, 20)] == [1.0, 0.3, 0.3, 0.09, 0.09]
    assert trainer.learning_rate(2, 2, 1.0, second_drop=True) == 0.09  # at least the last epoch


def test_correction_scale_shrinks_the_net_output(tmp_path: Path) -> None:
    data = _matrices(random_records(400, seed=8), tmp_path, "train")
    net, _ = trainer.train(data, hidden=8, epochs=2, batch=128, lr=0.01, seed=1, holdout=0.1,
                           progress=False, log=lambda line: None)
    stm, other = trainer.feature_matrices(data[:100])
    full = trainer.quantised_cp(trainer.quantise(net), stm, other)
    half = trainer.quantised_cp(trainer.quantise(net, correction_scale=0.5), stm, other)
    assert np.abs(full).max() > 20  # there is a correction to shrink
    assert np.abs(half - full / 2).max() <= 3  # rounding of the halved weights only


def opening_chunk(folder: Path, name: str, scores: list[int]) -> int:
    """A chunk `name` of up to four positions of one opening, scored `scores`; returns its count."""
    board = chess.Board()
    records = []
    for score, move in zip(scores, ["e2e4", "e7e5", "g1f3", "b8c6"]):
        records.append(Record(board.copy(stack=False), score, RESULT_UNKNOWN))
        board.push_uci(move)
    return write_chunk(folder / f"{name}.psd.xz", records)


def test_provenance_is_one_line_a_chunk_and_reads_back_alike(tmp_path: Path) -> None:
    chunks = {f"play-{index:04d}": {"games": 10, "positions": 800 + index, "written": 500 + index}
              for index in (3, 1, 2)}
    datagen.save_provenance(tmp_path, {"seed": 1, "chunks": dict(chunks), "play": "the teacher's own games"})
    text = (tmp_path / "provenance.json").read_text()
    assert json.loads(text) == {"seed": 1, "chunks": dict(sorted(chunks.items())), "play": "the teacher's own games",
                                "total_written": 1506}
    lines = text.splitlines()
    assert [line.split(":")[0].strip() for line in lines if "play-" in line] == ['"play-0001"', '"play-0002"',
                                                                                 '"play-0003"']
    assert '  "play-0001": {"games":10,"positions":801,"written":501},' in lines
    datagen.save_provenance(tmp_path, {"chunks": {}})
    assert datagen.load_provenance(tmp_path) == {"chunks": {}, "total_written": 0}


def test_merge_takes_recorded_readable_new_chunks_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from training import merge

    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    mine = {"play-0000": {"written": opening_chunk(here, "play-0000", [10, 20])}}
    datagen.save_provenance(here, {"seed": 1, "chunks": dict(mine)})
    theirs = {"play-0000": {"written": opening_chunk(there, "play-0000", [10, 20])},  # the same file: already here
              "play-0001": {"written": opening_chunk(there, "play-0001", [1, 2, 3])},
              "play-0002": {"written": 9}}  # miscounted
    opening_chunk(there, "play-0002", [5])
    opening_chunk(there, "play-0003", [7, 8])  # written after the last save: an orphan
    datagen.save_provenance(there, {"seed": 1, "chunks": theirs})
    assert merge.main([str(here), str(there)]) == 1
    err = capsys.readouterr().err
    assert "added 1 chunks (3 records); 1 already here, 1 orphans skipped; total_written 5" in err
    assert "unreadable or miscounted: play-0002" in err
    provenance = json.loads((here / "provenance.json").read_text())
    assert sorted(provenance["chunks"]) == ["play-0000", "play-0001"] and provenance["seed"] == 1
    assert [r.score for r in read_chunk(here / "play-0001.psd.xz")] == [1, 2, 3]
    assert not (here / "play-0002.psd.xz").exists() and not (here / "play-0003.psd.xz").exists()
    # A different file under a name this folder has is a conflict, never overwritten.
    (there / "play-0001.psd.xz").unlink()
    theirs["play-0001"]["written"] = opening_chunk(there, "play-0001", [4, 5, 6])
    del theirs["play-0002"]
    (there / "play-0002.psd.xz").unlink(), (there / "play-0003.psd.xz").unlink()
    datagen.save_provenance(there, {"chunks": theirs})
    assert merge.main([str(here), str(there)]) == 1
    assert "differ from the chunk here: play-0001" in capsys.readouterr().err
    assert [r.score for r in read_chunk(here / "play-0001.psd.xz")] == [1, 2, 3]


def test_verify_reads_back_and_names_orphans_damage_and_miscounts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from training import verify

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    recorded = {"play-0000": {"written": opening_chunk(tmp_path, "play-0000", [1, 2])}}
    datagen.save_provenance(tmp_path, {"chunks": dict(recorded)})
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "first"], check=True)
    recorded["play-0001"] = {"written": opening_chunk(tmp_path, "play-0001", [3, 4, 5])}
    recorded["play-0002"] = {"written": 7}  # provenance says 7; the file holds 1
    opening_chunk(tmp_path, "play-0002", [6])
    recorded["play-0004"] = {"written": opening_chunk(tmp_path, "play-0004", [1, 1])}
    damaged = (tmp_path / "play-0004.psd.xz").read_bytes()
    (tmp_path / "play-0004.psd.xz").write_bytes(damaged[:len(damaged) // 2])  # truncated
    opening_chunk(tmp_path, "play-0003", [8, 9])  # written after the last save: an orphan
    recorded["play-0005"] = {"written": 3}  # recorded, never written
    datagen.save_provenance(tmp_path, {"chunks": recorded})
    assert [chunk.file_name for chunk in verify.untracked_chunks(tmp_path)] == [
        "play-0001.psd.xz", "play-0002.psd.xz", "play-0003.psd.xz", "play-0004.psd.xz"]
    assert verify.main([str(tmp_path), "--untracked"]) == 1
    err = capsys.readouterr().err
    assert "4 chunks read back, 3 records recorded and counted right" in err
    assert "orphans (not in provenance.json; --remove-orphans deletes them): play-0003" in err
    assert "miscounted: play-0002 (1 records, provenance says 7)" in err
    assert "unreadable: " in err and "play-0004.psd.xz" in err
    assert "missing" not in err  # only a whole-folder check looks for files that are not there
    whole = verify.verify(tmp_path)
    assert whole.files == 5 and whole.records == 5 and whole.missing == ["play-0005"]
    assert verify.main([str(tmp_path), "--untracked", "--remove-orphans"]) == 1  # damage is never removed
    assert not (tmp_path / "play-0003.psd.xz").exists() and (tmp_path / "play-0004.psd.xz").exists()
    for name in ("play-0002", "play-0004", "play-0005"):
        (tmp_path / f"{name}.psd.xz").unlink(missing_ok=True)
        del recorded[name]
    datagen.save_provenance(tmp_path, {"chunks": recorded})
    assert verify.main([str(tmp_path)]) == 0
    assert "2 chunks read back, 5 records recorded and counted right" in capsys.readouterr().err


def _reference_loss(params: dict[str, np.ndarray], stm, other, target: np.ndarray, bucket: np.ndarray) -> float:
    """The float net's loss written out plainly in float64, dense: what `FloatNet.loss_and_grads` differentiates."""
    w1 = params["w1"]
    a = np.concatenate([np.clip(stm.toarray() @ w1 + params["b1"], 0, 1),
                        np.clip(other.toarray() @ w1 + params["b1"], 0, 1)], axis=1)
    if "l2w" in params:  # layer stacks: each row through its bucket's layer (one stack: every row through it)
        stack = bucket if len(params["l2w"]) > 1 else np.zeros_like(bucket)
        a = np.clip(np.einsum("ij,ijk->ik", a, params["l2w"][stack]) + params["l2b"][stack], 0, 1)
        w, b = params["w3"], params["b3"]
    else:
        w, b = params["w2"], params["b2"]
    out = np.sum(a * w[bucket], axis=1) + b[bucket]
    prob = 1 / (1 + np.exp(-out * trainer.CP_SCALE / trainer.K))
    return float(np.mean((prob - target) ** 2))


@pytest.mark.parametrize("layer2, buckets, stacks", [(0, 1, False), (4, 1, False), (0, 3, False), (4, 3, False),
                                                     (4, 3, True)])
def test_every_gradient_is_the_reference_losss_slope(tmp_path: Path, layer2: int, buckets: int, stacks: bool) -> None:
    """Each parameter's gradient from the trainer's fast backward pass equals a
    central finite difference of the plain float64 reference loss, at the
    entries where it matters most (the largest gradients of each array)."""
    data = _matrices(random_records(300, seed=21), tmp_path, "train")[:120]
    rng = np.random.default_rng(5)
    net = trainer.FloatNet(5, rng, buckets=buckets, layer2=layer2, stacks=stacks)
    for key, value in net.params.items():  # away from the start's zeros, so that every path carries a gradient
        value += rng.standard_normal(value.shape).astype(np.float32) * (0.3 if key in ("w2", "w3") else 0.05)
    stm, other = trainer.feature_matrices(data)
    target = trainer.targets(data)
    bucket = trainer.output_buckets(data, buckets)
    _, grads = net.loss_and_grads(stm, other, target, bucket)
    assert set(grads) == set(net.params)
    params = {key: value.astype(np.float64) for key, value in net.params.items()}
    for key, grad in grads.items():
        assert grad.shape == params[key].shape and grad.dtype == np.float32
        flat = np.abs(grad).ravel()
        assert flat.max() > 0, key
        places = [np.unravel_index(index, grad.shape) for index in np.argsort(flat)[-3:]]
        if stacks and key in ("l2w", "l2b"):  # and each bucket's own layer's largest
            assert all(grad[stack].any() for stack in range(buckets)), key
            places += [(stack, *np.unravel_index(np.argmax(np.abs(grad[stack])), grad.shape[1:]))
                       for stack in range(buckets)]
        for where in places:
            step = 1e-5
            params[key][where] += step
            up = _reference_loss(params, stm, other, target, bucket)
            params[key][where] -= 2 * step
            down = _reference_loss(params, stm, other, target, bucket)
            params[key][where] += step
            assert (up - down) / (2 * step) == pytest.approx(grad[where], rel=1e-3, abs=1e-9), (key, where)


def test_threads_share_a_batch_and_sum_to_its_gradient(tmp_path: Path) -> None:
    """A batch split among threads (`batch_step`) gives the one-thread loss and
    gradients up to rounding, uneven slices and mirrored twins included."""
    from concurrent.futures import ThreadPoolExecutor
    data = _matrices(random_records(400, seed=23), tmp_path, "train")
    net = trainer.FloatNet(7, np.random.default_rng(3), buckets=2, layer2=3)
    for value in net.params.values():
        value += np.random.default_rng(4).standard_normal(value.shape).astype(np.float32) * 0.05
    inputs = trainer.Inputs(data)
    target = np.tile(trainer.targets(data), 2)
    bucket = np.tile(trainer.output_buckets(data, 2), 2)
    rows = np.random.default_rng(5).permutation(2 * len(data))[:301]  # plain positions and twins, 301 rows
    alone = trainer.batch_step(net, inputs, rows, target, bucket, None, 1)
    with ThreadPoolExecutor(3) as pool:
        shared = trainer.batch_step(net, inputs, rows, target, bucket, pool, 3)
    assert shared[0] == pytest.approx(alone[0], rel=1e-5)
    assert set(shared[1]) == set(alone[1])
    for key, grad in alone[1].items():
        assert grad.any() and np.allclose(shared[1][key], grad, rtol=1e-4, atol=1e-7 * np.abs(grad).max()), key


def test_scores_of_a_large_set_come_slice_by_slice_and_equal_the_whole(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The float and integer nets score a large set a slice at a time (held-out
    sets of half a million positions took 15 GB at once): the same scores."""
    from training import nnue_net
    data = _matrices(random_records(50, seed=31), tmp_path, "train")
    net = trainer.FloatNet(6, np.random.default_rng(7), buckets=2, layer2=3)
    net.params["w3"] += 0.5
    quantised = trainer.quantise(net)
    stm, other = trainer.feature_matrices(data)
    bucket = trainer.output_buckets(data, 2)
    whole = net.cp(stm, other, bucket), trainer.quantised_cp(quantised, stm, other, bucket)
    monkeypatch.setattr(nnue_net, "SLICE_ROWS", 7)
    sliced = net.cp(stm, other, bucket), trainer.quantised_cp(quantised, stm, other, bucket)
    assert len(sliced[0]) == len(sliced[1]) == len(data) and np.abs(whole[1]).max() > 0
    assert np.allclose(sliced[0], whole[0], rtol=1e-6, atol=1e-4) and np.array_equal(sliced[1], whole[1])
