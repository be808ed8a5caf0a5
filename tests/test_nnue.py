"""The learned evaluation: net file, incremental accumulators, symmetry, the search, the UCI options."""
from __future__ import annotations

import dataclasses
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import zlib
from collections import Counter
from pathlib import Path

import chess
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eval import nnue, nnue_layers
from eval.evaluate import evaluate
from eval.nnue import INPUTS, Net, NetError, bundled_net
from search.driver import Searcher
from search.features import Features
from search.position import Position
from search.timeman import Limits
from tests.reference import minimax
from tests.strategies import boards, special_move
from tests.uci_process import RawEngine

ROOT = Path(__file__).resolve().parent.parent


def random_net(hidden: int = 16, seed: int = 0, buckets: int = 1, layer2: int = 0, stacks: bool = False) -> Net:
    """A net with random weights large enough that every clip and sign matters (`stacks`: a second layer per bucket)."""
    rng = np.random.default_rng(seed)
    w2 = rng.integers(-200, 200, (buckets, 2 * hidden), dtype=np.int16)
    b2 = tuple(int(b) for b in rng.integers(-5000, 5000, buckets))
    deep = None
    if layer2:
        layers = buckets if stacks else 1
        deep = nnue.DeepHead(rng.normal(0, 0.3, (layers, 2 * hidden, layer2)), rng.normal(0.2, 0.5, (layers, layer2)),
                             rng.normal(0, 1, (buckets, layer2)), rng.normal(0, 0.5, buckets))
        w2, b2 = np.zeros((buckets, 2 * hidden), np.int16), (0,) * buckets
    return Net(hidden, 255, 64, 400,
               rng.integers(-300, 300, (INPUTS, hidden), dtype=np.int16),
               rng.integers(-100, 400, hidden, dtype=np.int16),
               w2 if buckets > 1 else w2[0], b2 if buckets > 1 else b2[0], deep=deep)


NETS = [random_net(), bundled_net(), random_net(seed=1), random_net(seed=2, buckets=8),
        random_net(seed=5, buckets=4), random_net(seed=6, buckets=2, layer2=8),
        random_net(seed=7, buckets=4, layer2=8, stacks=True)]
ALL_NETS = list(range(len(NETS)))


def feature(perspective: chess.Color, color: chess.Color, piece_type: int, square: int) -> int:
    """Index of a piece on a square among one perspective's inputs (the module docstring's formula)."""
    if perspective == chess.BLACK:
        square ^= 56
    return 64 * (6 * (color != perspective) + piece_type - 1) + square


def plain_accumulators(net: Net, board: chess.Board) -> tuple[np.ndarray, np.ndarray]:
    """White's and Black's clipped accumulators by the book: each perspective's features summed separately (no dual rows)."""
    def perspective(colour: chess.Color) -> np.ndarray:
        acc = net.b1.astype(np.int64).copy()
        for square, piece in board.piece_map().items():
            acc += net.w1[feature(colour, piece.color, piece.piece_type, square)]
        return np.clip(acc, 0, net.qa)
    return perspective(chess.WHITE), perspective(chess.BLACK)


def plain_bucket(net: Net, board: chess.Board) -> int:
    return (len(board.piece_map()) - 1) * net.buckets // 32  # the module docstring's formula


def evaluate_plain(net: Net, board: chess.Board) -> int:
    """The engine's score by the book, in integers: the accumulators summed afresh, a second layer by `deep_score_reference`."""
    white, black = plain_accumulators(net, board)
    bucket = plain_bucket(net, board)
    if net.deep is not None:
        return deep_score_reference(net, np.concatenate([white, black]), board.turn, bucket)
    stm, other = (white, black) if board.turn else (black, white)
    h = net.hidden
    w2 = net.w2[bucket].astype(np.int64)
    total = int(stm @ w2[:h] + other @ w2[h:]) + net.b2[bucket]
    return total * net.cp_scale // (net.qa * net.qb)


def evaluate_float(net: Net, board: chess.Board) -> int:
    """A second-layer net's score as the trainer computes it: the file's float32 weights in float64, unrounded."""
    white, black = plain_accumulators(net, board)
    stm, other = (white, black) if board.turn else (black, white)
    bucket = plain_bucket(net, board)
    a = np.concatenate([stm, other]) / net.qa
    stack = bucket if net.deep.stacks > 1 else 0  # layer stacks: the bucket picks the second layer too
    hidden2 = np.clip(a @ net.deep.weight[stack].astype(np.float64) + net.deep.bias[stack], 0, 1)
    return math.floor((hidden2 @ net.deep.out_weight[bucket] + net.deep.out_bias[bucket]) * net.cp_scale)


def quantisation_tolerance(net: Net) -> int:
    """How far the engine's second layer may be from the float net's (`evaluate_float`), in centipawns.

    The engine rounds the second layer's weights at the tables' scale: a
    rounding step at DEEP_SCALE (2**16); at a smaller scale the rounded
    weights stray more, in proportion.  The bundled net, at 2**9, strays by
    1.2 centipawns on average and at most 6 over 2,406 positions of random
    games, within the 1 + 8 this allows there; the random test nets run at
    2**12 to 2**16.
    """
    return 1 + 8 * nnue_layers.FLOAT32_LEAST_SCALE // net.deep_tables.scale


def test_bundled_net_ships_and_loads() -> None:
    net = bundled_net()
    assert net is not None, "eval/default.nnue is missing or invalid"
    assert nnue.BUNDLED.stat().st_size < 10_000_000
    # Sane on the start position: near equal, and a queen up is a big advantage.
    assert abs(net.evaluate(chess.Board())) < 100
    assert net.evaluate(chess.Board("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")) > 500


@pytest.mark.parametrize("chess960", [False, True])
@pytest.mark.parametrize("net_index", ALL_NETS)
def test_incremental_accumulators_equal_from_scratch(chess960: bool, net_index: int) -> None:
    """After every move of a random game (castling, ep, promotions, null moves) the
    incremental accumulators equal the from-scratch sum, and so does the score.

    The games are steered towards the moves that touch more than two features
    (tests.strategies.special_move); over the examples each kind must actually
    have been played, or the test proves nothing about it."""
    net = NETS[net_index]
    played: Counter[str] = Counter()

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(seed=st.integers(0, 2**32 - 1))
    def game(seed: int) -> None:
        rng = random.Random(seed)
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
        pos = Position(board, net)
        for _ in range(rng.randrange(40, 160)):
            if not any(pos.board.legal_moves):
                break
            move = special_move(pos.board, rng.randrange(10_000))
            if rng.random() < 0.1 and not pos.board.is_check():
                played["null move"] += 1
                pos.push_null()
                assert np.array_equal(pos.acc, net.accumulator(pos.board))
                pos.pop()
            played["castling"] += pos.board.is_castling(move)
            played["en passant"] += pos.board.is_en_passant(move)
            played["promotion"] += move.promotion is not None
            played["capture"] += pos.board.is_capture(move)
            pos.push(move)
            assert np.array_equal(pos.acc, net.accumulator(pos.board)), pos.board.fen()
            assert pos.evaluate() == net.evaluate(pos.board)
            assert net.evaluate(pos.board) == evaluate_plain(net, pos.board)
        while pos.board.move_stack:
            pos.pop()
            assert np.array_equal(pos.acc, net.accumulator(pos.board))

    game()
    assert all(played[kind] for kind in ("castling", "en passant", "promotion", "capture", "null move")), played


@pytest.mark.parametrize("net_index", ALL_NETS)
@settings(max_examples=30, deadline=None)
@given(board=boards())
def test_mirrored_position_scores_the_same(net_index: int, board: chess.Board) -> None:
    """Board flipped, colours and side to move swapped: the same score for the side to move."""
    net = NETS[net_index]
    assert net.evaluate(board) == net.evaluate(board.mirror())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=boards(), depth=st.integers(min_value=1, max_value=2))
@pytest.mark.parametrize("net_index", [1, 2, 3, 4, 5])
def test_exact_search_with_the_net_equals_minimax(net_index: int, board: chess.Board, depth: int) -> None:
    net = NETS[net_index]
    result = Searcher(1, Features.exact(), net=net).search(board, Limits(depth=depth))
    assert result.score == minimax(board, depth, evaluate=net.evaluate)


def test_net_round_trips_through_its_file(tmp_path: Path) -> None:
    net = random_net(8, seed=3)
    path = tmp_path / "a.nnue"
    net.save(path)
    loaded = nnue.load(path)
    assert np.array_equal(loaded.w1, net.w1) and loaded.architecture == net.architecture == "768->8x2->1"
    for board in (chess.Board(), chess.Board("8/5k2/8/3P4/8/8/2K5/8 b - - 0 1")):
        assert loaded.evaluate(board) == net.evaluate(board)


def test_a_second_layer_round_trips_and_is_named(tmp_path: Path) -> None:
    net = NETS[5]
    path = tmp_path / "deep.nnue"
    net.save(path)
    loaded = nnue.load(path)
    assert loaded.deep is not None and loaded.deep.size == 8
    assert np.array_equal(loaded.deep.weight, net.deep.weight) and np.array_equal(loaded.deep.out_bias, net.deep.out_bias)
    assert loaded.architecture == "768->16x2->8->2 (output buckets)"
    scores = []
    for fen in ("r1bq1rk1/pppp1ppp/2n2n2/2b1p3/2B1P3/2N2N2/PPPP1PPP/R1BQ1RK1 w - - 6 6", "8/5k2/8/3P4/8/2K5/8/8 b - - 0 1"):
        board = chess.Board(fen)
        assert loaded.evaluate(board) == net.evaluate(board) == Position(board, loaded).evaluate()
        assert net.evaluate(board) == evaluate_plain(net, board)
        assert abs(net.evaluate(board) - evaluate_float(net, board)) <= quantisation_tolerance(net)
        scores.append(net.evaluate(board) - evaluate(board))
    assert len(set(scores)) == 2 and all(abs(score) > 5 for score in scores)  # the layer says something
    data = bytearray(net.to_bytes()[:-4])
    struct.pack_into("<f", data, len(data) - 4, float("nan"))
    path.write_bytes(_with_crc(bytes(data)))
    with pytest.raises(NetError, match="not a finite number"):
        nnue.load(path)


def test_layer_stacks_round_trip_as_version_4_and_each_bucket_reads_its_own(tmp_path: Path) -> None:
    """A net with a second layer per output bucket is written as version 4 (a net
    without keeps version 3, which older engines read); each bucket's score
    depends on its own layer only."""
    net = NETS[6]
    assert net.deep is not None and net.deep.stacks == net.buckets == 4
    assert net.architecture == "768->16x2->8->4 (output buckets, layer stacks)"
    assert struct.unpack_from("<H", net.to_bytes(), 4) == (4,)
    assert struct.unpack_from("<H", NETS[5].to_bytes(), 4) == (3,)
    path = tmp_path / "stacks.nnue"
    net.save(path)
    loaded = nnue.load(path)
    assert np.array_equal(loaded.deep.weight, net.deep.weight) and np.array_equal(loaded.deep.bias, net.deep.bias)
    clipped = np.clip(np.random.default_rng(1).integers(-100, 400, 2 * net.hidden), 0, net.qa)
    inputs = net.deep_inputs()
    inputs[:-1] = clipped
    weight = net.deep.weight.copy()
    weight[2] *= -1  # bucket 2's layer alone changes
    changed = dataclasses.replace(net, deep=nnue.DeepHead(weight, net.deep.bias, net.deep.out_weight,
                                                          net.deep.out_bias))
    for bucket in range(4):
        for turn in chess.COLORS:
            same = changed.deep_score(inputs, turn, bucket) == net.deep_score(inputs, turn, bucket)
            assert same == (bucket != 2), (bucket, turn)
            assert loaded.deep_score(inputs, turn, bucket) == deep_score_reference(net, clipped, turn, bucket)


def deep_score_reference(net: Net, clipped: np.ndarray, turn: chess.Color, bucket: int) -> int:
    """`Net.deep_score` in integers: the float32 weights scaled and rounded as `DeepTables` says, summed in int64.

    The second layer's weights are times the tables' own scale, the
    output's times DEEP_SCALE; no sum comes near 2**63.
    """
    scale, out_scale, qa = net.deep_tables.scale, nnue.DEEP_SCALE, net.qa
    stm, rest = (clipped[:net.hidden], clipped[net.hidden:]) if turn else (clipped[net.hidden:], clipped[:net.hidden])
    inputs = np.concatenate([stm, rest]).astype(np.int64)
    stack = bucket if net.deep.stacks > 1 else 0
    weight = np.round(net.deep.weight[stack].astype(np.float64) * scale).astype(np.int64)
    bias = np.round(net.deep.bias[stack].astype(np.float64) * (qa * scale)).astype(np.int64)
    hidden2 = np.clip(inputs @ weight + bias, 0, qa * scale)
    out_weight = np.round(net.deep.out_weight[bucket].astype(np.float64) * out_scale).astype(np.int64)
    out = round(float(net.deep.out_bias[bucket]) * qa * scale * out_scale) + int(hidden2 @ out_weight)
    return out * net.cp_scale // (qa * scale * out_scale)


def test_the_second_layers_float_arithmetic_is_exact_integer_arithmetic() -> None:
    net = random_net(24, seed=9, buckets=4, layer2=16)
    rng = np.random.default_rng(3)
    inputs = net.deep_inputs()
    scores = set()
    for _ in range(100):
        clipped = np.clip(rng.integers(-100, 400, 2 * net.hidden), 0, net.qa)
        inputs[:-1] = clipped
        for turn in chess.COLORS:
            for bucket in range(net.buckets):
                score = net.deep_score(inputs, turn, bucket)
                assert score == deep_score_reference(net, clipped, turn, bucket)
                scores.add(score)
    assert len(scores) > 300  # the clips and buckets are exercised, not one constant


def largest_partial_sum(net: Net, scale: int) -> int:
    """The largest magnitude a partial sum of the second layer reaches at `scale`, in Python integers.

    Each unit's rounded weights and bias, inputs in [0, QA]: its positive
    terms at their largest, or its negative ones.
    """
    largest = 0
    for weight, bias in zip(net.deep.weight, net.deep.bias):
        for unit in range(net.deep.size):
            terms = [net.qa * round(float(w) * scale) for w in weight[:, unit]] + [round(float(bias[unit]) * net.qa * scale)]
            largest = max(largest, sum(t for t in terms if t > 0), -sum(t for t in terms if t < 0))
    return largest


def worst_case_products_are_exact(tables: nnue.DeepTables, qa: int) -> bool:
    """The second layer's float product equals the integer one on each unit's worst inputs (QA where its weight is positive, or negative)."""
    for black, white in tables.inputs:
        for table in (black, white):
            integers = table.astype(np.int64)
            for sign in (1, -1):
                for unit in range(table.shape[0]):
                    inputs = np.where(sign * integers[unit] > 0, qa, 0)
                    inputs[-1] = 1  # the bias's input
                    if not np.array_equal(table.dot(inputs.astype(table.dtype)), integers @ inputs):
                        return False
    return True


def test_the_second_layer_runs_in_float32_at_the_largest_exact_scale() -> None:
    """float32 (half the cost of float64) at the largest power of two that keeps every partial sum exact; the bundled net too."""
    for net in (bundled_net(), *(net for net in NETS if net is not None and net.deep is not None)):
        tables = net.deep_tables
        assert tables.dtype == np.float32 and net.deep_inputs().dtype == np.float32 and net.acc_dtype == np.float32
        assert nnue_layers.FLOAT32_LEAST_SCALE <= tables.scale <= nnue.DEEP_SCALE
        assert largest_partial_sum(net, tables.scale) < 2 ** 24
        assert worst_case_products_are_exact(tables, net.qa)
        if tables.scale < nnue.DEEP_SCALE:
            assert largest_partial_sum(net, 2 * tables.scale) >= 2 ** 24
    # The bundled net at twice its scale: float32 really does miss (the check above has teeth).
    net = bundled_net()
    twice = nnue.DeepTables.at(net.deep, net.hidden, net.qa, 2 * net.deep_tables.scale, np.float32)
    assert not twice.exact and not worst_case_products_are_exact(twice, net.qa)


def test_a_second_layer_too_large_for_float32_runs_exactly_in_float64() -> None:
    net = random_net(24, seed=9, buckets=4, layer2=16)
    large = dataclasses.replace(net, deep=nnue.DeepHead(net.deep.weight * 300, net.deep.bias, net.deep.out_weight,
                                                        net.deep.out_bias))
    tables = large.deep_tables
    assert tables.dtype == np.float64 and tables.scale == nnue.DEEP_SCALE and tables.exact
    assert large.deep_inputs().dtype == np.float64 and large.acc_dtype == np.float64
    assert largest_partial_sum(large, nnue_layers.FLOAT32_LEAST_SCALE) >= 2 ** 24  # float32 could not
    assert worst_case_products_are_exact(tables, large.qa)
    rng = random.Random(6)
    for _ in range(3):
        pos = Position(chess.Board(), large)
        for _ in range(30):
            moves = list(pos.board.legal_moves)
            if not moves:
                break
            pos.push(rng.choice(moves))
            assert pos.evaluate() == large.evaluate(pos.board) == evaluate_plain(large, pos.board)
            assert pos.acc.dtype == np.float64


def test_the_engines_second_layer_stays_near_the_float_net() -> None:
    """The rounding of the second layer's weights moves a score by a little: positions of fixed random games."""
    for net in (bundled_net(), NETS[5], NETS[6]):
        rng = random.Random(5)
        drifts = []
        for _ in range(8):
            board = chess.Board()
            for _ in range(rng.randrange(20, 60)):
                moves = list(board.legal_moves)
                if not moves:
                    break
                board.push(rng.choice(moves))
                drifts.append(abs(net.evaluate(board) - evaluate_float(net, board)))
        assert max(drifts) <= quantisation_tolerance(net) and sum(drifts) / len(drifts) <= 2, (net.name, drifts)
        assert len(drifts) > 100


def test_a_second_layer_too_large_for_exact_sums_is_refused(tmp_path: Path) -> None:
    net = random_net(8, seed=4, layer2=4)
    huge = nnue.DeepHead(net.deep.weight * 1e9, net.deep.bias, net.deep.out_weight, net.deep.out_bias)
    stacked = random_net(8, seed=4, buckets=3, layer2=4, stacks=True)
    weight = stacked.deep.weight.copy()
    weight[2] *= 1e9  # the last stack alone
    huge_stack = nnue.DeepHead(weight, stacked.deep.bias, stacked.deep.out_weight, stacked.deep.out_bias)
    for name, shape, deep, sane in (("sane.nnue", net, net.deep, True), ("huge.nnue", net, huge, False),
                                    ("stacked.nnue", stacked, stacked.deep, True),
                                    ("huge-stack.nnue", stacked, huge_stack, False)):
        path = tmp_path / name
        path.write_bytes(dataclasses.replace(shape, deep=deep).to_bytes())
        if sane:
            assert nnue.load(path).deep is not None
        else:
            with pytest.raises(NetError, match="too large for exact arithmetic"):
                nnue.load(path)


def test_output_buckets_round_trip_and_each_bucket_is_used(tmp_path: Path) -> None:
    net = random_net(8, seed=4, buckets=8)
    path = tmp_path / "buckets.nnue"
    net.save(path)
    loaded = nnue.load(path)
    assert loaded.buckets == 8 and np.array_equal(loaded.w2, net.w2) and loaded.b2 == net.b2
    assert sorted(set(net.bucket_of[2:])) == list(range(8))  # 2..32 pieces reach every bucket
    # Kings and pawns only: the endgame buckets decide, and they are not the opening's.
    endgame = chess.Board("8/5k2/8/3P4/8/8/2K5/8 b - - 0 1")
    assert loaded.evaluate(endgame) == net.evaluate(endgame) == evaluate_plain(net, endgame)
    single = Net(net.hidden, net.qa, net.qb, net.cp_scale, net.w1, net.b1, net.w2[7], net.b2[7])
    assert net.evaluate(chess.Board()) == single.evaluate(chess.Board())  # 32 pieces: the last bucket
    assert net.evaluate(endgame) != single.evaluate(endgame)


@pytest.mark.parametrize("offset, value, refusal", [
    (4, 2, "unsupported version 2"), (4, 1, "unsupported version 1"),
    (6, 2, "feature set 2 \\(king buckets\\) is no longer supported"),
    (16, 1, "base 1 \\(a correction to the classical evaluation\\) is no longer supported")])
def test_retired_designs_are_refused_by_name(tmp_path: Path, offset: int, value: int, refusal: str) -> None:
    """Versions 1-2, king buckets and the classical base: no bundled net uses them any more."""
    data = bytearray(random_net(8, seed=3).to_bytes()[:-4])
    struct.pack_into("<H", data, offset, value)
    path = tmp_path / "retired.nnue"
    path.write_bytes(_with_crc(bytes(data)))
    with pytest.raises(NetError, match=refusal):
        nnue.load(path)


def _with_crc(body: bytes) -> bytes:
    return body + struct.pack("<I", zlib.crc32(body))


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = random_net(8).to_bytes()
    stacked = random_net(8, buckets=4, layer2=4, stacks=True).to_bytes()  # version 4: stacks at bytes 22-23
    assert struct.unpack_from("<H", stacked, 4) == (4,) and struct.unpack_from("<H", stacked, 22) == (4,)
    cases = {
        "missing": (b"", "cannot read"),
        "truncated": (good[:-100], "truncated"),
        "corrupt": (good[:200] + bytes([good[200] ^ 1]) + good[201:], "checksum"),
        "wrong architecture": (good[:8] + struct.pack("<H", 9) + good[10:], "architecture"),
        "unknown base": (_with_crc(good[:16] + struct.pack("<H", 7) + good[18:-4]), "unsupported base 7"),
        "too many buckets": (_with_crc(good[:18] + struct.pack("<H", 33) + good[20:-4]), "buckets 33"),
        "unknown version": (_with_crc(good[:4] + struct.pack("<H", 5) + good[6:-4]), "unsupported version 5"),
        "stacks not one per bucket": (_with_crc(stacked[:22] + struct.pack("<H", 3) + stacked[24:-4]), "stacks 3"),
        "no stacks": (_with_crc(stacked[:22] + struct.pack("<H", 0) + stacked[24:-4]), "stacks 0"),
        "stacks without a second layer": (_with_crc(stacked[:20] + struct.pack("<H", 0) + stacked[22:-4]),
                                          "layer2 0, stacks 4"),
        "cut in the stacks field": (stacked[:23], "truncated"),
        "not a net": (b"# not a net at all, just some text" * 10, "not a Pawnstorm net"),
    }
    files = {}
    for name, (data, problem) in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.nnue"
        if name != "missing":
            path.write_bytes(data)
        files[name] = (path, problem)
    return files


def test_bad_net_files_are_refused_with_the_reason(tmp_path: Path) -> None:
    for name, (path, problem) in _bad_files(tmp_path).items():
        with pytest.raises(NetError, match=problem) as caught:
            nnue.load(path)
        assert str(path) in str(caught.value), name


def test_what_cannot_be_a_net_is_refused_unread(tmp_path: Path) -> None:
    """A pipe, a directory or a device would block the read or fill the memory: refused before reading."""
    fifo = tmp_path / "pipe.nnue"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.nnue"
    with open(huge, "wb") as handle:
        handle.truncate(nnue.MAX_NET_BYTES + 1)  # sparse: no disk used
    cases = [(fifo, "not a regular file"), (tmp_path, "not a regular file"), (huge, "larger than any net")]
    if Path("/dev/zero").exists():
        cases.append((Path("/dev/zero"), "not a regular file"))
    for path, problem in cases:
        with pytest.raises(NetError, match=problem):
            nnue.load(path)


def test_a_net_with_an_absurd_scale_never_scores_a_mate() -> None:
    """A sound file whose cp_scale is absurd would score quiet positions as mates: static scores are capped."""
    from search.driver import Searcher
    from search.timeman import Limits
    from search.types import MAX_STATIC_SCORE, mate_in

    scaled = dataclasses.replace(bundled_net(), cp_scale=65535)
    board = chess.Board("8/8/8/4k3/8/8/8/4K2Q w - - 0 1")
    assert scaled.evaluate(board) > MAX_STATIC_SCORE  # the net's own score, uncapped
    result = Searcher(1, net=scaled).search(board, Limits(depth=3))
    assert mate_in(result.score) is None and result.best_move in board.legal_moves


def _uci(commands: list[str]) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "uci_engine"], input="\n".join(commands + ["quit"]) + "\n",
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_uci_bad_eval_files_keep_the_net_and_the_engine_serving(tmp_path: Path) -> None:
    commands = ["uci"]
    bad = len(_bad_files(tmp_path))
    for path, _ in _bad_files(tmp_path).values():
        commands += [f"setoption name EvalFile value {path}", "isready", "position startpos moves e2e4", "go depth 2"]
    lines = _uci(commands)
    refusals = [line for line in lines if line.startswith("info string EvalFile not loaded")]
    assert len(refusals) == bad
    for (path, problem), line in zip(_bad_files(tmp_path).values(), refusals):
        assert str(path) in line and problem in line and "keeping the previous net" in line
    assert lines.count("readyok") == bad
    moves = [line.split()[1] for line in lines if line.startswith("bestmove")]
    board = chess.Board()
    board.push_uci("e2e4")
    assert len(moves) == bad and all(chess.Move.from_uci(move) in board.legal_moves for move in moves)


def test_uci_options_switch_and_load_nets(tmp_path: Path) -> None:
    custom = tmp_path / "custom.nnue"
    random_net(8, seed=5).save(custom)
    board = chess.Board()
    lines = _uci(["uci", "setoption name Use NNUE value true", "eval", "setoption name Use NNUE value false", "eval",
                  f"setoption name EvalFile value {custom}", "setoption name Use NNUE value true", "eval"])
    assert "option name EvalFile type string default <bundled>" in lines
    assert f"option name Use NNUE type check default {str(nnue.USE_NNUE_DEFAULT).lower()}" in lines
    nnue_lines = [line for line in lines if line.startswith("NNUE evaluation:")]
    assert len(nnue_lines) == 3
    assert "in use" in nnue_lines[0] and "not in use" in nnue_lines[1] and "in use" in nnue_lines[2]
    expected = random_net(8, seed=5).evaluate(board)
    assert f"{expected / 100:+.2f} (side to move)" in nnue_lines[2]
    assert any(line.startswith("info string EvalFile loaded") and str(custom) in line for line in lines)  # (Use NNUE was off)
    assert any(line.startswith("Final evaluation:") for line in lines)  # the classical terms are still shown


def test_eval_file_loaded_while_use_nnue_is_off_says_it_is_not_in_use(tmp_path: Path) -> None:
    custom = tmp_path / "custom.nnue"
    random_net(8, seed=5).save(custom)
    lines = _uci(["uci", "setoption name Use NNUE value false", f"setoption name EvalFile value {custom}", "eval"])
    loaded = [line for line in lines if line.startswith("info string") and str(custom) in line]
    assert len(loaded) == 1 and "not in use" in loaded[0] and "NNUE evaluation using" not in loaded[0]
    assert any(line.startswith("NNUE evaluation:") and "not in use" in line for line in lines)


def test_eval_file_reads_a_leading_tilde_as_home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # (the engine below inherits it)
    random_net(8, seed=5).save(tmp_path / "custom.nnue")
    lines = _uci(["uci", "setoption name EvalFile value ~/custom.nnue", "eval"])
    assert any(line.startswith("info string NNUE evaluation using") for line in lines), lines
    expected = random_net(8, seed=5).evaluate(chess.Board())
    assert any(line.startswith("NNUE evaluation:") and f"{expected / 100:+.2f} (side to move)" in line for line in lines)


#: The packages an engine needs to run from a copy of the source tree.
ENGINE_PACKAGES = ("uci_engine", "search", "eval", "opening_book")
#: Searched by the engines compared below: a middlegame where the net and the classical evaluation differ.
SEARCHED = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


def _searched(cwd: Path, env: dict[str, str], tmp_path: Path, setup: list[str]) -> tuple[list[str], list[str]]:
    """Start the engine, send `setup`, search SEARCHED to depth 3: (the lines before the search,
    the search's `info depth` lines without their timings, which differ from run to run, and bestmove)."""
    engine = RawEngine([sys.executable, "-m", "uci_engine"], cwd, env, tmp_path / f"stderr-{len(setup)}.txt")
    try:
        engine.send("uci")
        _, handshake = engine.expect("uciok")
        for command in setup:
            engine.send(command)
        before = handshake + ["uciok"] + engine.sync()
        engine.send(f"position fen {SEARCHED}")
        engine.send("go depth 3")
        bestmove, lines = engine.bestmove(chess.Board(SEARCHED))
        engine.send("quit")
        assert engine.wait_exit() == 0 and engine.stderr() == ""
    finally:
        engine.close()
    search = []
    for line in lines:
        if line.startswith("info depth") and " pv " in line:
            words = line.split()
            for timing in ("time", "nps", "hashfull"):
                at = words.index(timing)
                del words[at:at + 2]
            search.append(" ".join(words))
    return before, search + [bestmove.uci()]


@pytest.mark.parametrize("damage", ["missing", "truncated", "corrupt"])
def test_a_bad_bundled_net_is_named_at_start_up_and_the_classical_evaluation_plays(tmp_path: Path,
                                                                                    damage: str) -> None:
    """The engine run from a copy of the source tree whose eval/default.nnue is missing or damaged."""
    copy = tmp_path / "engine"
    for package in ENGINE_PACKAGES:
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    bundled = copy / "eval" / "default.nnue"
    data = bundled.read_bytes()
    if damage == "missing":
        bundled.unlink()
    elif damage == "truncated":
        bundled.write_bytes(data[:len(data) // 2])
    else:
        bundled.write_bytes(data[:1000] + bytes([data[1000] ^ 1]) + data[1001:])
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONUNBUFFERED": "1"}
    before, search = _searched(copy, env, tmp_path, ["eval"])
    # Said once, at the handshake, naming the file and the problem.
    notes = [line for line in before if "bundled net" in line]
    assert len(notes) == 1 and notes[0].startswith("info string NNUE: the bundled net is not usable"), before
    assert str(bundled) in notes[0] and "classical evaluation" in notes[0]
    assert before.index(notes[0]) < before.index("uciok")
    assert "NNUE evaluation: no net loaded" in before
    # And it plays: the very search of the classical evaluation, node for node.
    _, classical = _searched(ROOT, env | {"PYTHONPATH": str(ROOT)}, tmp_path, ["setoption name Use NNUE value false"])
    _, with_net = _searched(ROOT, env | {"PYTHONPATH": str(ROOT)}, tmp_path, [])
    assert search == classical != with_net


def test_search_score_comes_from_the_chosen_evaluation() -> None:
    """Use NNUE on and off give the depth-1 score of the net and of the classical evaluation."""
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    net = bundled_net()
    exact = Features.exact()
    assert Searcher(1, exact, net=net).search(board, Limits(depth=1)).score == minimax(board, 1, evaluate=net.evaluate)
    assert Searcher(1, exact).search(board, Limits(depth=1)).score == minimax(board, 1)
