"""Version 2 chunk files (`training.packed`): lossless, compact, corruption named, version 1 still read."""
from __future__ import annotations

import lzma
import random
import shutil
from pathlib import Path

import chess
import numpy as np
import pytest

from training import convert, packed
from training import nnue as trainer
from training.chunks import SUFFIX, SUFFIX_V1, chunk_name, list_chunks, read_chunk, read_raw, write_chunk
from training.records import MATE_SCORE, RECORD, RESULT_UNKNOWN, DataFormatError, Record, encode


def _pick(board: chess.Board, rng: random.Random) -> chess.Move:
    """A random legal move, preferring the special ones so that every game has its share of them."""
    moves = list(board.legal_moves)
    special = [m for m in moves if board.is_castling(m) or board.is_en_passant(m) or m.promotion]
    if special and rng.random() < 0.7:
        return rng.choice(special)
    pushes = [m for m in moves if board.piece_type_at(m.from_square) == chess.PAWN]
    if pushes and rng.random() < 0.5:
        return rng.choice(pushes)
    return rng.choice(moves)


def game_records(games: int, seed: int) -> tuple[list[Record], dict[str, int]]:
    """Positions of random games as a generator keeps them: gaps of 1..6 plies, scores of all sizes.

    Returns the records and how many castlings, en-passant captures and
    promotions the kept stretches of the games went through.
    """
    rng = random.Random(seed)
    records: list[Record] = []
    special = {"castling": 0, "en_passant": 0, "promotion": 0}
    for _ in range(games):
        board = chess.Board()
        gap = 0
        for _ in range(rng.randrange(30, 200)):
            if board.is_game_over():
                break
            move = _pick(board, rng)
            kinds = (board.is_castling(move), board.is_en_passant(move), bool(move.promotion))
            board.push(move)
            gap += 1
            if rng.random() < 0.7 or gap >= 6:
                if records and gap <= packed.MAX_PLIES:  # a stretch the format can store as plies
                    for name, happened in zip(special, kinds):
                        special[name] += happened
                score = rng.choice([rng.randrange(-300, 300), rng.randrange(-3000, 3000), MATE_SCORE, -MATE_SCORE])
                result = rng.choice([0, 1, 2, RESULT_UNKNOWN])
                records.append(Record(board.copy(stack=False), score, result))
                gap = 0
    return records, special


def _same(a: Record, b: Record) -> bool:
    return encode(a) == encode(b)


def test_games_round_trip_through_version_2_with_castling_en_passant_and_promotions(tmp_path: Path) -> None:
    records, special = game_records(30, seed=1)
    # The games really went through the moves whose rules `apply` has to know.
    assert special["castling"] >= 5 and special["en_passant"] >= 5 and special["promotion"] >= 5, special
    path = tmp_path / f"play-0000{SUFFIX}"
    assert write_chunk(path, records) == len(records)
    back = read_chunk(path)
    assert len(back) == len(records) and all(_same(a, b) for a, b in zip(records, back))
    # Most records were stored as plies, not whole boards.
    data = lzma.decompress(path.read_bytes())
    steps = data[packed.HEADER.size:packed.HEADER.size + len(records)]
    assert sum(1 for step in steps if step) > 0.7 * len(records)


def test_every_stored_ply_matches_python_chess() -> None:
    """The hand-written `apply` against python-chess's own `push`, on the special moves above all."""
    rng = random.Random(2)
    checked = 0
    for _ in range(40):
        board = chess.Board()
        for _ in range(rng.randrange(20, 150)):
            if board.is_game_over():
                break
            move = _pick(board, rng)
            before = packed.state_of(encode(Record(board, 0, 0)))
            board.push(move)
            after = packed.state_of(encode(Record(board, 0, 0)))
            promotion = move.promotion - 1 if move.promotion else 0
            stored = move.from_square | move.to_square << 6 | promotion << 12
            assert packed.apply(before, stored).key() == after.key(), (board.fen(), move)
            checked += 1
    assert checked > 1000


def test_version_2_is_much_smaller_than_version_1(tmp_path: Path) -> None:
    records, _ = game_records(30, seed=3)
    write_chunk(tmp_path / "a.psd.gz", records)
    write_chunk(tmp_path / f"a{SUFFIX}", records)
    assert (tmp_path / f"a{SUFFIX}").stat().st_size < 0.6 * (tmp_path / "a.psd.gz").stat().st_size


def test_same_records_same_bytes(tmp_path: Path) -> None:
    records, _ = game_records(5, seed=4)
    write_chunk(tmp_path / f"a{SUFFIX}", records)
    write_chunk(tmp_path / f"b{SUFFIX}", records)
    assert (tmp_path / f"a{SUFFIX}").read_bytes() == (tmp_path / f"b{SUFFIX}").read_bytes()


def _rewrite(path: Path, target: Path, change) -> Path:
    target.write_bytes(lzma.compress(change(lzma.decompress(path.read_bytes()))))
    return target


def test_damaged_version_2_files_name_the_file_and_offset(tmp_path: Path) -> None:
    records, _ = game_records(5, seed=5)
    good = tmp_path / f"good{SUFFIX}"
    write_chunk(good, records)
    cut = tmp_path / f"cut{SUFFIX}"
    cut.write_bytes(good.read_bytes()[:-20])
    with pytest.raises(DataFormatError, match=f"cut{SUFFIX}: cannot decompress"):
        read_raw(cut)
    short = _rewrite(good, tmp_path / f"short{SUFFIX}", lambda data: data[:-7])
    with pytest.raises(DataFormatError, match=f"short{SUFFIX}: stream lengths do not match the header at offset 12"):
        read_raw(short)
    score_at = len(lzma.decompress(good.read_bytes())) - 3 * len(records)
    flipped = _rewrite(good, tmp_path / f"flipped{SUFFIX}",
                       lambda data: data[:score_at] + bytes([data[score_at] ^ 0x40]) + data[score_at + 1:])
    with pytest.raises(DataFormatError, match=f"flipped{SUFFIX}: checksum mismatch"):
        read_raw(flipped)
    header = tmp_path / f"header{SUFFIX}"
    header.write_bytes(lzma.compress(b"PSTP\x07\x00"))
    with pytest.raises(DataFormatError, match="truncated header at offset 0"):
        read_raw(header)
    magic = _rewrite(good, tmp_path / f"magic{SUFFIX}", lambda data: b"XXXX" + data[4:])
    with pytest.raises(DataFormatError, match="bad magic b'XXXX' at offset 0"):
        read_raw(magic)


def test_a_move_from_an_empty_square_is_named_with_its_offset(tmp_path: Path) -> None:
    records, _ = game_records(3, seed=6)
    good = tmp_path / f"good{SUFFIX}"
    write_chunk(good, records)
    data = lzma.decompress(good.read_bytes())
    count = len(records)
    origins = packed.HEADER.size + count
    # Send the first stored ply from a square that is empty on the board it is played on.
    first_ply_record = next(index for index in range(count) if data[packed.HEADER.size + index])
    board = read_chunk(good)[first_ply_record - 1].board
    empty = next(square for square in chess.SQUARES if board.piece_at(square) is None)
    bad = _rewrite(good, tmp_path / f"bad{SUFFIX}", lambda raw: raw[:origins] + bytes([empty]) + raw[origins + 1:])
    with pytest.raises(DataFormatError, match=rf"bad{SUFFIX}: bad move at offset {origins} "):
        read_raw(bad)


def test_flags_are_refused_rather_than_dropped() -> None:
    board = chess.Board()
    record = RECORD.pack(*RECORD.unpack(encode(Record(board, 0, 1)))[:-1], 1)
    with pytest.raises(ValueError, match="flags"):
        packed.pack(record)


def test_convert_keeps_every_record_and_the_trainer_sees_the_same_data(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    for index in range(3):
        write_chunk(old / f"play-{index:04d}{SUFFIX_V1}", game_records(4, seed=10 + index)[0])
    write_chunk(old / f"tree-0000{SUFFIX_V1}", game_records(2, seed=20)[0][::3])  # far apart: whole boards
    shutil.copytree(old, new)
    assert convert.main([str(new)]) == 0
    assert sorted(path.name for path in new.iterdir()) == sorted(chunk_name(path) + SUFFIX for path in old.iterdir())
    before, after = list_chunks(old), list_chunks(new)
    assert [read_raw(a) for a in before] == [read_raw(b) for b in after]
    assert list(trainer.holdout_files(before, 0.5)) == list(trainer.holdout_files(after, 0.5))
    records_old, files_old = trainer.load_chunks(before)
    records_new, files_new = trainer.load_chunks(after)
    assert records_old.tobytes() == records_new.tobytes() and np.array_equal(files_old, files_new)
    assert convert.main([str(new)]) == 0  # resumed: nothing left to do, nothing lost
    assert len(list_chunks(new)) == 4


def test_a_directory_may_hold_both_versions(tmp_path: Path) -> None:
    write_chunk(tmp_path / f"play-0001{SUFFIX}", game_records(2, seed=30)[0])
    write_chunk(tmp_path / f"play-0000{SUFFIX_V1}", game_records(2, seed=31)[0])
    assert [chunk.file_name for chunk in list_chunks(tmp_path)] == [f"play-0000{SUFFIX_V1}", f"play-0001{SUFFIX}"]
