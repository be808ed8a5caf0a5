"""Syzygy paths and files as users give them: lists, mixes, other tables, and bad input.

Every bad input must end in an `info string` naming the problem, with the
engine still serving and still playing legal moves from its search; a table
damaged inside (which no header check can see) must cost its probes, never
the search thread.  The good tables are the ones that come with the tests
(tests/data/syzygy: every 3- and 4-piece table and KRBvKR); the bad ones are
made here from copies of them.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import chess
import chess.engine
import pytest

from search.types import TB_WIN
from tests.uci_process import guarded_engine

DATA = Path(__file__).resolve().parent / "data"
SYZYGY_DIR = DATA / "syzygy"
GAVIOTA_DIR = DATA / "gaviota"
ALL_TABLES = "Syzygy: 36 WDL and 36 DTZ tables, up to 5 pieces"
KQK = "8/8/8/4k3/8/8/8/K6Q w - - 0 1"
#: Six pieces, beyond the tables at the root; captures lead into them.
SIX_PIECES = "8/4k3/8/8/3r4/8/1n1R4/K5Q1 w - - 0 1"
#: Five pieces, beyond the tables at the root. Rxd5 leads into a won four-piece table; the earliest
#: second capture is the black king taking the rook on ply 6 (after two rook checks), where a
#: depth-4 search, even with both check extensions, has no depth left to probe. So the limit
#: decides the probes whatever the evaluation prefers.
ONE_CAPTURE_FROM_FOUR = "7k/8/8/3p4/P7/8/8/K2R4 w - - 0 1"
#: Six pieces; Rxd4 or Bxd4 leads into KRBvKR.
INTO_KRBKR = "r3k3/8/8/8/3n4/4B3/8/3R2K1 w - - 0 1"


@pytest.fixture(scope="module")
def syzygy_dir() -> Path:
    return SYZYGY_DIR


def linked_copy(source: Path, target: Path, only: Callable[[str], bool] = lambda name: True) -> Path:
    """`target` holding links to the tables of `source` whose names `only` accepts."""
    target.mkdir(parents=True, exist_ok=True)
    for table in source.glob("*.rtb[wz]"):
        if only(table.stem):
            (target / table.name).symlink_to(table)
    return target


def info_strings(lines: list[str]) -> list[str]:
    return [line[len("info string "):] for line in lines if line.startswith("info string ")]


def search_plays_legally(raw, fen: str, go: str = "go depth 2") -> list[str]:
    """Search `fen`; the lines before a legal bestmove (RawEngine checks the move)."""
    raw.send(f"position fen {fen}")
    raw.send(go)
    _, before = raw.bestmove(chess.Board(fen))
    return before


# --- paths ------------------------------------------------------------------------------------------


def test_paths_are_joined_by_the_os_separator(raw, tmp_path, syzygy_dir) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    raw.send(f"setoption name SyzygyPath value {empty}{os.pathsep}{syzygy_dir}{os.pathsep}/no/such/tables")
    messages = info_strings(raw.sync())
    assert messages[-1] == ALL_TABLES, messages
    assert any(str(empty) in message and "no tables" in message for message in messages), messages
    assert any("/no/such/tables" in message and "not a directory" in message for message in messages), messages
    before = search_plays_legally(raw, KQK)
    assert any(" tbhits " in line and " tbhits 0 " not in line for line in before), before


def test_tables_split_over_folders_with_a_missing_one(raw, tmp_path, syzygy_dir) -> None:
    """Three-piece tables in one folder, the rest in another, a missing folder between them."""
    three = linked_copy(syzygy_dir, tmp_path / "three", lambda name: len(name) == 4)
    more = linked_copy(syzygy_dir, tmp_path / "more", lambda name: len(name) > 4)
    raw.send(f"setoption name SyzygyPath value {three}{os.pathsep}/no/such{os.pathsep}{more}")
    assert info_strings(raw.sync()) == ["Syzygy: '/no/such' is not a directory", ALL_TABLES]
    # KRBvKR, lost: only Rg3 holds out 90 plies (the tables' score says so).
    before = search_plays_legally(raw, "1k6/8/8/R1KB4/8/3r4/8/8 b - - 0 1")
    assert f" score cp {-TB_WIN + 90} " in before[-1] and " pv d3g3" in before[-1], before
    # KRvK, from the three-piece folder.
    before = search_plays_legally(raw, "R7/8/8/4k3/8/8/8/7K w - - 0 1")
    assert " score cp 3" in before[-1], before


def test_syzygy_and_gaviota_together(engine_cmd, repo_root, engine_env, syzygy_dir) -> None:
    with guarded_engine(engine_cmd, repo_root, engine_env) as engine:
        engine.configure({"OwnBook": False, "SyzygyPath": str(syzygy_dir), "GaviotaTbPath": str(GAVIOTA_DIR)})
        # Syzygy ranks the root (Qxh2 zeroes at once); Gaviota gives the mate distance after it.
        info = engine.analyse(chess.Board("8/8/8/8/2k5/8/7r/K6Q w - - 0 1"), chess.engine.Limit(depth=3))
        assert info["pv"][0] == chess.Move.from_uci("h1h2")
        assert info["score"].relative.mate() is not None and info["score"].relative.mate() > 0
        assert info["tbhits"] > 0


# --- SyzygyProbeLimit ----------------------------------------------------------------------------------


@pytest.mark.parametrize("limit, probed", [(7, True), (4, True), (3, False), (0, False)])
def test_probe_limit_is_honoured(engine_cmd, repo_root, engine_env, syzygy_dir, limit, probed) -> None:
    with guarded_engine(engine_cmd, repo_root, engine_env) as engine:
        engine.configure({"OwnBook": False, "SyzygyPath": str(syzygy_dir), "SyzygyProbeLimit": limit})
        info = engine.analyse(chess.Board(ONE_CAPTURE_FROM_FOUR), chess.engine.Limit(depth=4))
        # Rxd5 leads into a won four-piece table: found by probing it, unless the limit is below four.
        assert (info["tbhits"] > 0) == probed, info
        assert (info["score"].relative > chess.engine.Cp(20000)) == probed, info
        # The root still uses the tables whatever the limit.
        root = engine.analyse(chess.Board(KQK), chess.engine.Limit(depth=1))
        assert root["tbhits"] > 0 and root["score"].relative > chess.engine.Cp(20000)


@pytest.mark.parametrize("depth, probed", [(1, True), (2, False)])
def test_probe_depth_is_honoured(engine_cmd, repo_root, engine_env, syzygy_dir, depth, probed) -> None:
    """Probes only where at least SyzygyProbeDepth plies remain: none deeper than the search."""
    with guarded_engine(engine_cmd, repo_root, engine_env) as engine:
        assert engine.options["SyzygyProbeDepth"].default == 1
        engine.configure({"OwnBook": False, "SyzygyPath": str(syzygy_dir), "SyzygyProbeDepth": depth})
        info = engine.analyse(chess.Board(SIX_PIECES), chess.engine.Limit(depth=4))
        assert (info["tbhits"] > 0) == probed, info


# --- bad input: explained, and the engine plays on --------------------------------------------------------


def copy_tables(syzygy_dir: Path, target: Path, names: list[str]) -> Path:
    target.mkdir()
    for name in names:
        shutil.copy(syzygy_dir / name, target / name)
    return target


def test_missing_folder_is_named(raw) -> None:
    raw.send("setoption name SyzygyPath value /no/such/tables")
    messages = info_strings(raw.sync())
    assert any("'/no/such/tables' is not a directory" in message for message in messages), messages
    assert messages[-1] == "Syzygy: no usable tables found; Syzygy tablebases off"
    search_plays_legally(raw, KQK)


def test_folder_without_tables_is_named(raw, tmp_path) -> None:
    (tmp_path / "README.txt").write_text("no tables here")
    raw.send(f"setoption name SyzygyPath value {tmp_path}")
    messages = info_strings(raw.sync())
    assert any(str(tmp_path) in message and "no tables" in message for message in messages), messages
    search_plays_legally(raw, KQK)


@pytest.mark.parametrize("damage, problem", [
    ("cut", "invalid file size"),  # python-chess's own size check
    ("cut-aligned", "truncated"),  # a size that looks right, cut before the header's last block
    ("garbage", "invalid magic header"),
])
def test_damaged_table_is_named_and_left_out(raw, tmp_path, syzygy_dir, damage, problem) -> None:
    folder = copy_tables(syzygy_dir, tmp_path / "tables", ["KQvK.rtbw", "KQvK.rtbz", "KRvK.rtbw", "KRvK.rtbz"])
    table = folder / "KQvK.rtbw"
    data = table.read_bytes()
    if damage == "cut":
        table.write_bytes(data[:len(data) // 2])
    elif damage == "cut-aligned":
        table.write_bytes(data[:len(data) - 64])
    else:
        table.write_bytes(bytes(range(256)) * (len(data) // 256) + data[:len(data) % 256])
    raw.send(f"setoption name SyzygyPath value {folder}")
    messages = info_strings(raw.sync())
    named = [message for message in messages if str(table) in message]
    assert named and problem in named[0] and "not used" in named[0], messages
    assert messages[-1] == "Syzygy: 1 WDL and 2 DTZ tables, up to 3 pieces"  # KRvK still serves
    search_plays_legally(raw, KQK)
    before = search_plays_legally(raw, "R7/8/8/4k3/8/8/8/7K w - - 0 1")
    assert any(" tbhits " in line and " tbhits 0 " not in line for line in before), before


def test_table_damaged_inside_costs_its_probes_not_the_search(raw, tmp_path, syzygy_dir) -> None:
    folder = linked_copy(syzygy_dir, tmp_path / "tables", lambda name: name != "KRBvKR")
    shutil.copy(syzygy_dir / "KRBvKR.rtbz", folder)
    data = bytearray((syzygy_dir / "KRBvKR.rtbw").read_bytes())
    data[len(data) // 64:-16] = b"\xff" * (len(data) - 16 - len(data) // 64)  # the header survives
    (folder / "KRBvKR.rtbw").write_bytes(bytes(data))
    raw.send(f"setoption name SyzygyPath value {folder}")
    assert info_strings(raw.sync())[-1] == ALL_TABLES  # nothing to see from the outside
    before = search_plays_legally(raw, INTO_KRBKR, "go depth 3")
    problems = info_strings(before)
    assert any("KRBvKR probe failed" in message for message in problems), problems
    # Still serving, and the other tables still answer.
    assert raw.sync() == []
    before = search_plays_legally(raw, KQK)
    assert any(" tbhits " in line and " tbhits 0 " not in line for line in before), before
    assert raw.stderr() == ""
