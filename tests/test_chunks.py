"""Shards: loose chunks packed into a few large files read back byte for byte, and every reader sees them."""
from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest

from training import chunks, datagen, verify
from training.chunks import SUFFIX, SUFFIX_V1, list_chunks, read_raw, write_chunk
from training.nnue_data import holdout_files, load_records
from training.records import RESULT_UNKNOWN, DataFormatError, Record


def _chunk(folder: Path, name: str, plies: int, suffix: str = SUFFIX) -> int:
    """A chunk of the first `plies` positions of a fixed game."""
    board = chess.Board()
    records = []
    for ply, move in enumerate(["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6"][:plies]):
        records.append(Record(board.copy(stack=False), 10 * ply, RESULT_UNKNOWN))
        board.push_uci(move)
    return write_chunk(folder / f"{name}{suffix}", records)


def _folder(tmp_path: Path) -> tuple[Path, dict[str, dict]]:
    recorded = {}
    for index in range(6):
        recorded[f"play-{index:04d}"] = {"written": _chunk(tmp_path, f"play-{index:04d}", 2 + index)}
    recorded["sf-0000"] = {"written": _chunk(tmp_path, "sf-0000", 3, SUFFIX_V1)}
    datagen.save_provenance(tmp_path, {"chunks": recorded})
    return tmp_path, recorded


def test_pack_keeps_every_chunk_byte_for_byte_and_the_held_out_split(tmp_path: Path) -> None:
    folder, recorded = _folder(tmp_path)
    loose = list_chunks(folder)
    before = {chunk.name: chunk.read_bytes() for chunk in loose}
    records = load_records(loose)
    digest = chunks.digest(loose)
    held = list(holdout_files(loose, 0.5))
    shards = chunks.pack(folder, shard_bytes=600)  # small: several shards, one kind each
    assert len(shards) >= 2 and not list(folder.glob("*.psd.*"))
    assert {chunk.name.split("-")[0] for shard in shards for chunk in chunks.read_shard_index(shard)} == {"play", "sf"}
    assert all(len({c.name.split("-")[0] for c in chunks.read_shard_index(shard)}) == 1 for shard in shards)
    packed = list_chunks(folder)
    assert not any(chunk.loose for chunk in packed)
    assert {chunk.name: chunk.read_bytes() for chunk in packed} == before
    assert chunks.digest(packed) == digest
    assert list(holdout_files(packed, 0.5)) == held
    assert np.array_equal(load_records(packed), records)
    assert verify.verify(folder).ok and verify.verify(folder).records == sum(c["written"] for c in recorded.values())


def test_generator_resumes_past_packed_chunks_and_pack_adds_new_shards(tmp_path: Path) -> None:
    folder, recorded = _folder(tmp_path)
    first = chunks.pack(folder)
    assert chunks.chunk_names(folder) == set(recorded)  # what datagen skips when it resumes
    recorded["play-0006"] = {"written": _chunk(folder, "play-0006", 4)}  # made after the pack: loose
    datagen.save_provenance(folder, {"chunks": recorded})
    assert [chunk.name for chunk in list_chunks(folder) if chunk.loose] == ["play-0006"]
    assert verify.verify(folder).ok
    second = chunks.pack(folder)
    assert len(second) == 1 and set(first) <= set(folder.glob("*.shard"))  # old shards untouched
    assert [chunk.name for chunk in chunks.read_shard_index(second[0])] == ["play-0006"]


def test_a_chunk_held_twice_is_reported(tmp_path: Path) -> None:
    folder, recorded = _folder(tmp_path)
    chunks.pack(folder)
    _chunk(folder, "play-0001", 3)  # the same name again, loose
    result = verify.verify(folder)
    assert not result.ok and any("held twice" in line for line in result.miscounted)


def test_a_damaged_shard_names_itself(tmp_path: Path) -> None:
    folder, _ = _folder(tmp_path)
    [shard] = chunks.pack(folder, shard_bytes=10**9)[:1]
    data = shard.read_bytes()
    shard.write_bytes(data[:-5])
    with pytest.raises(DataFormatError, match="the index says"):
        list_chunks(folder)
    shard.write_bytes(b"XXXX" + data[4:])
    with pytest.raises(DataFormatError, match="not a version 1 shard"):
        list_chunks(folder)
    shard.write_bytes(data[:-5] + b"\0" * 5)  # right length, damaged member: its own checksum fails
    member = chunks.read_shard_index(shard)[-1]
    with pytest.raises(DataFormatError, match=member.file_name):
        read_raw(member)


def test_command_line_packs_and_digests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, recorded = _folder(tmp_path)
    assert chunks.main(["digest", str(folder)]) == 0
    before = capsys.readouterr().out
    assert chunks.main(["pack", str(folder)]) == 0
    capsys.readouterr()
    assert chunks.main(["digest", str(folder)]) == 0
    assert capsys.readouterr().out == before
    assert f"{len(recorded)} chunks" in before
    with pytest.raises(SystemExit):
        chunks.main(["pack", str(folder / "missing")])
