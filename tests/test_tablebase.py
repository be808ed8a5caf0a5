"""Endgame tablebases: opening paths, probes, root filtering, and won endings played out.

Real tables come with the tests (tests/data, README there): the 3-man
Gaviota set (cp4) and the Syzygy set (3- and 4-piece, and KRBvKR).  The Syzygy
root ranking is checked here against python-chess's own prober on those
files; tests/test_syzygy.py plays the endings out through UCI and
tests/test_syzygy_files.py feeds the engine bad paths and damaged files.
The games drive the real engine through python-chess's `SimpleEngine`, with
node limits so that each takes a few seconds at most.

Past 500 lines on purpose: both table formats and the root filtering share
the bundled tables' fixtures; the bad-path tests are in test_syzygy_files.py.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import chess
import chess.engine
import pytest

from search.driver import Iteration, Searcher
from search.syzygy import dtz_rank, is_decided
from search.tablebase import (
    RootResult,
    Tablebases,
    dtz_score,
    rank_score,
    split_paths,
    tablebase_score,
)
from search.timeman import Limits
from search.tt import TranspositionTable, decode, score_from_tt
from search.types import EXACT, LOWER, MATE, MATE_BOUND, TB_WIN, TB_WIN_BOUND, UPPER
from tests.uci_process import guarded_engine

DATA = Path(__file__).resolve().parent / "data"
GAVIOTA_DIR = DATA / "gaviota"
#: One 3-man table in another compression (cp1), which the pure-Python reader cannot read.
GAVIOTA_CP1_DIR = DATA / "gaviota-cp1"
SYZYGY_DIR = DATA / "syzygy"

#: Hard starts: defending king in the centre, attacking king in a far corner.
KQK_HARD = "8/8/8/4k3/8/8/8/K6Q w - - 0 1"  # mate in 9 (17 plies)
KRK_HARD = "R7/8/8/4k3/8/8/8/7K w - - 0 1"  # mate in 16 (31 plies), the longest KRK mate
KRK_HARD_BLACK = "r7/8/8/4K3/8/8/8/7k b - - 0 1"  # the same with colours reversed
#: Only Kd3 wins; a plain depth-4 search prefers c2c3, a draw.
KPK_ONLY_KD3 = "8/8/8/3k4/8/8/2KP4/8 w - - 0 1"
#: The rook is attacked: half of White's moves keep the win, the rest drop it.
KRK_ROOK_ATTACKED = "8/8/8/8/8/2k5/1R6/K7 w - - 0 1"
#: Four pieces (beyond the 3-man tables): Qxh2 leads into a table position.
KQKR_CAPTURE = "8/8/8/8/2k5/8/7r/K6Q w - - 0 1"


@pytest.fixture(scope="module")
def gaviota_dir() -> Path:
    return GAVIOTA_DIR


@pytest.fixture(scope="module")
def gaviota(gaviota_dir):
    """python-chess's own prober: the independent referee for what the engine does."""
    import chess.gaviota

    with chess.gaviota.PythonTablebase() as tables:
        tables.add_directory(str(gaviota_dir))
        yield tables


@pytest.fixture
def tables(gaviota_dir) -> Tablebases:
    tablebases = Tablebases()
    assert tablebases.set_gaviota_path(str(gaviota_dir)) == ["Gaviota: 5 tables, up to 3 pieces"]
    yield tablebases
    tablebases.close()


def keeping_the_distance(board: chess.Board, distance: int, probe) -> set[chess.Move]:
    """The moves that keep a root distance (DTM or DTZ, in plies) the tables give: the best moves.

    The tables' own definition, from the root's value rather than from a
    formula on the children's: with `distance` d > 0 (mate or zeroing in d
    plies) a best move leaves the opponent `probe` = -(d - 1), or mates when
    d = 1; with d < 0 (the longest resistance) it leaves the opponent d' =
    |d| - 1.  A zeroing move (capture, pawn move) starts a new count: it
    keeps a distance only when that distance is 1.
    """
    best = set()
    for move in board.legal_moves:
        zeroing = board.is_zeroing(move)
        child = board.copy(stack=False)
        child.push(move)
        if child.is_checkmate():
            kept = distance == 1
        elif zeroing or distance == 0:
            kept = False
        else:
            kept = probe(child) == (-(distance - 1) if distance > 0 else -distance - 1)
        if kept:
            best.add(move)
    assert best, f"no move keeps the distance {distance} in {board.fen()}"
    return best


def child_wdl(referee, board: chess.Board, move: chess.Move) -> int:
    """Syzygy's WDL for the opponent after `move`."""
    child = board.copy(stack=False)
    child.push(move)
    return -2 if child.is_checkmate() else referee.probe_wdl(child)


# --- paths: never an exception, always an explanation -----------------------------------------


def test_split_paths() -> None:
    assert split_paths("") == [] and split_paths("<empty>") == [] and split_paths("  ") == []
    assert split_paths(f" /a {os.pathsep}{os.pathsep}/b") == ["/a", "/b"]


def test_split_paths_reads_a_leading_tilde_as_home(monkeypatch, tmp_path: Path) -> None:
    """A GUI's option value went through no shell: `~/syzygy` still means the home folder's."""
    monkeypatch.setenv("HOME", str(tmp_path))
    assert split_paths(f"~/syzygy{os.pathsep}/a/~b") == [str(tmp_path / "syzygy"), "/a/~b"]


def test_bad_syzygy_paths_are_explained(tmp_path: Path) -> None:
    afile = tmp_path / "KQvK.txt"
    afile.write_text("not a table")
    tablebases = Tablebases()
    messages = tablebases.set_syzygy_path(os.pathsep.join(["/no/such/dir", str(tmp_path), str(afile)]))
    assert any("/no/such/dir" in message and "not a directory" in message for message in messages), messages
    assert any(str(tmp_path) in message and "no tables" in message for message in messages), messages
    assert any(str(afile) in message for message in messages), messages
    assert messages[-1] == "Syzygy: no usable tables found; Syzygy tablebases off"
    assert tablebases.syzygy is None and tablebases.max_pieces == 0
    assert tablebases.probe_wdl(chess.Board(KQK_HARD)) is None
    assert tablebases.root_moves(chess.Board(KQK_HARD)) is None
    assert tablebases.set_syzygy_path("<empty>") == []


def test_bad_gaviota_paths_are_explained(tmp_path: Path) -> None:
    tablebases = Tablebases()
    messages = tablebases.set_gaviota_path(os.pathsep.join(["/no/such/dir", str(tmp_path)]))
    assert "'/no/such/dir' is not a directory" in messages[0]
    assert "no tables (*.gtb.cp4)" in messages[1]
    assert tablebases.max_pieces == 0


def test_a_pipe_named_like_a_gaviota_table_is_named_not_read(tmp_path: Path) -> None:
    """Opening a pipe blocks until someone writes to it: the engine would never answer `isready`."""
    os.mkfifo(tmp_path / "kqk.gtb.cp4")
    messages = Tablebases().set_gaviota_path(str(tmp_path))
    assert any("kqk.gtb.cp4" in message and "not a regular file" in message for message in messages), messages


def test_gaviota_other_compressions_are_named() -> None:
    messages = Tablebases().set_gaviota_path(str(GAVIOTA_CP1_DIR))
    assert "cp1" in messages[0] and "*.gtb.cp4" in messages[0], messages


def test_gaviota_path_list_keeps_the_good_directory(gaviota_dir) -> None:
    tablebases = Tablebases()
    messages = tablebases.set_gaviota_path(f"/no/such/dir{os.pathsep}{gaviota_dir}")
    assert len(messages) == 2 and messages[-1] == "Gaviota: 5 tables, up to 3 pieces"
    assert tablebases.max_pieces == 3 and tablebases.search_pieces == 3
    tablebases.probe_limit = 0
    assert tablebases.search_pieces == 0
    tablebases.close()
    assert tablebases.max_pieces == 0


# --- probes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fen, wdl", [
    (KQK_HARD, 2),
    ("8/8/8/4k3/8/8/8/K6Q b - - 0 1", -2),
    ("8/8/8/4k3/8/8/8/K6B w - - 0 1", 0),  # KBK: insufficient material
    ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", 0),  # stalemate
    ("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", -2),  # checkmated
])
def test_probe_wdl(tables, fen, wdl) -> None:
    assert tables.probe_wdl(chess.Board(fen)) == wdl


@pytest.mark.parametrize("fen", [KQKR_CAPTURE, "r3k3/8/8/8/8/8/8/4K3 b q - 0 1"], ids=["4-man", "castling"])
def test_positions_outside_the_tables(tables, fen) -> None:
    board = chess.Board(fen)
    assert tables.probe_wdl(board) is None and tables.probe_score(board, 3) is None
    assert tables.root_moves(board) is None


def test_probe_score_is_an_exact_mate_score(tables, gaviota) -> None:
    board = chess.Board(KQK_HARD)
    dtm = gaviota.probe_dtm(board)
    hits = tables.hits
    assert tables.probe_score(board, 4) == MATE - 4 - dtm  # mates at ply 4 + dtm
    board.turn = chess.BLACK
    assert tables.probe_score(board, 3) == -MATE + 3 + abs(gaviota.probe_dtm(board))
    assert tables.probe_score(chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"), 5) == -MATE + 5
    assert tables.hits > hits


def test_probe_score_without_the_distance_is_a_tablebase_win(tables) -> None:
    # Too close to the fifty-move rule for the DTM to count as an exact mate.
    board = chess.Board("8/8/8/4k3/8/8/8/K6R w - - 90 80")
    score = tables.probe_score(board, 6)
    assert score == TB_WIN - 6 and score < MATE_BOUND


def test_tablebase_win_scores_are_stored_relative_to_the_node() -> None:
    table = TranspositionTable(1)
    table.store(42, 5, EXACT, TB_WIN - 7, None, ply=4)  # the won position is 3 plies from this node
    assert score_from_tt(decode(table.probe_data(42))[2], ply=2) == TB_WIN - 5
    table.store(43, 5, EXACT, -TB_WIN + 7, None, ply=4)
    assert score_from_tt(decode(table.probe_data(43))[2], ply=6) == -TB_WIN + 9


def damaged_gaviota_copy(target: Path, damage: str) -> Path:
    """A copy of the real 3-man tables with kqk.gtb.cp4 damaged as `damage` says."""
    target.mkdir()
    for table in GAVIOTA_DIR.glob("*.gtb.cp4"):
        shutil.copy(table, target / table.name)
    table = target / "kqk.gtb.cp4"
    data = bytearray(table.read_bytes())
    if damage == "cut":  # the second half of the blocks is gone
        table.write_bytes(data[:len(data) // 2])
    elif damage == "garbage":  # header and all
        table.write_bytes(bytes(range(256)) * (len(data) // 256))
    elif damage == "empty":
        table.write_bytes(b"")
    else:  # "inside": header and block index intact, every compressed block overwritten
        index_end = int.from_bytes(data[32:36], "little")
        data[index_end:] = b"\xff" * (len(data) - index_end)
        table.write_bytes(bytes(data))
    return target


#: What each header-visible damage is named with when the path is set.
DAMAGE_NAMED = {
    "cut": "truncated: 4721 bytes, the block index needs 9443",
    "garbage": "invalid header",
    "empty": "truncated: 0 bytes",
}


@pytest.mark.parametrize("damage", ["cut", "garbage", "empty"])
def test_damaged_gaviota_table_is_named_and_left_out(tmp_path, gaviota, damage) -> None:
    folder = damaged_gaviota_copy(tmp_path / "gtb", damage)
    tablebases = Tablebases()
    try:
        messages = tablebases.set_gaviota_path(str(folder))
        assert len(messages) == 2 and messages[-1] == "Gaviota: 4 tables, up to 3 pieces", messages
        assert str(folder / "kqk.gtb.cp4") in messages[0] and DAMAGE_NAMED[damage] in messages[0], messages
        assert "KQvK not used" in messages[0], messages
        # KQK is outside the tables now: no answer, no probe failure.
        board = chess.Board(KQK_HARD)
        assert tablebases.root_moves(board) is None and tablebases.probe_wdl(board) is None
        # The intact tables still answer, exactly as the referee does.
        krk = chess.Board(KRK_HARD)
        result = tablebases.root_moves(krk)
        assert result is not None and result.score == MATE - gaviota.probe_dtm(krk)
        # And the search goes on with its own evaluation where the table is gone.
        move, reports = search(tablebases, KQK_HARD, Limits(depth=3))
        assert move in board.legal_moves and reports[-1].depth == 3
        assert tablebases.take_problems() == []
    finally:
        tablebases.close()


def test_gaviota_table_damaged_inside_costs_its_probes_not_the_game(tmp_path, gaviota) -> None:
    folder = damaged_gaviota_copy(tmp_path / "gtb", "inside")
    tablebases = Tablebases()
    try:
        # Nothing to see from the outside: the header and the block index are sound.
        assert tablebases.set_gaviota_path(str(folder)) == ["Gaviota: 5 tables, up to 3 pieces"]
        board = chess.Board(KQK_HARD)
        # Every KQK probe fails: the root cannot be ranked, the position has no tables' score.
        assert tablebases.root_moves(board) is None
        assert tablebases.probe_wdl(board) is None and tablebases.probe_score(board, 1) is None
        # Named once, for the user.
        problems = tablebases.take_problems()
        assert len(problems) == 1 and problems[0].startswith("Gaviota: DTM KQvK probe failed ("), problems
        krk = chess.Board(KRK_HARD)
        result = tablebases.root_moves(krk)
        assert result is not None and result.score == MATE - gaviota.probe_dtm(krk)
        move, reports = search(tablebases, KQK_HARD, Limits(depth=3))
        assert move in board.legal_moves and reports[-1].depth == 3
        assert tablebases.take_problems() == []  # already named
    finally:
        tablebases.close()


def info_strings(lines: list[str]) -> list[str]:
    return [line[len("info string "):] for line in lines if line.startswith("info string ")]


@pytest.mark.parametrize("damage", ["cut", "garbage", "empty"])
def test_damaged_gaviota_table_is_named_through_uci(raw, tmp_path, damage) -> None:
    folder = damaged_gaviota_copy(tmp_path / "gtb", damage)
    raw.send(f"setoption name GaviotaTbPath value {folder}")
    messages = info_strings(raw.sync())
    assert len(messages) == 2 and messages[-1] == "Gaviota: 4 tables, up to 3 pieces", messages
    assert str(folder / "kqk.gtb.cp4") in messages[0] and DAMAGE_NAMED[damage] in messages[0], messages
    for fen in (KQK_HARD, KRK_HARD):
        raw.send(f"position fen {fen}")
        raw.send("go depth 3")
        _, before = raw.bestmove(chess.Board(fen))  # checks the move is legal
    # The intact KRK table is still probed.
    assert any(" tbhits " in line and " tbhits 0 " not in line for line in before), before
    assert raw.sync() == [] and raw.stderr() == ""


def test_gaviota_table_damaged_inside_is_named_after_the_search(raw, tmp_path) -> None:
    folder = damaged_gaviota_copy(tmp_path / "gtb", "inside")
    raw.send(f"setoption name GaviotaTbPath value {folder}")
    assert info_strings(raw.sync()) == ["Gaviota: 5 tables, up to 3 pieces"]
    raw.send(f"position fen {KQK_HARD}")
    raw.send("go depth 3")
    _, before = raw.bestmove(chess.Board(KQK_HARD))
    problems = info_strings(before)
    assert any(problem.startswith("Gaviota: DTM KQvK probe failed (") for problem in problems), problems
    # Still serving, once per table, and the intact tables still answer.
    raw.send(f"position fen {KRK_HARD}")
    raw.send("go depth 3")
    _, before = raw.bestmove(chess.Board(KRK_HARD))
    assert not any("probe failed" in problem for problem in info_strings(before)), before
    assert any(" tbhits " in line and " tbhits 0 " not in line for line in before), before
    assert raw.sync() == [] and raw.stderr() == ""


# --- root filtering ------------------------------------------------------------------------------------


def test_root_keeps_only_the_quickest_mates(tables, gaviota) -> None:
    board = chess.Board(KRK_ROOK_ATTACKED)
    result = tables.root_moves(board)
    dtm = gaviota.probe_dtm(board)
    assert dtm == 31
    quickest = keeping_the_distance(board, dtm, gaviota.probe_dtm)
    assert len(quickest) < board.legal_moves.count()  # others are slower or drop the rook
    assert result is not None and set(result.moves) == quickest
    assert result.score == MATE - dtm


def test_root_keeps_the_longest_resistance(tables, gaviota) -> None:
    board = chess.Board("8/8/8/4k3/8/8/8/K6R b - - 0 1")
    result = tables.root_moves(board)
    dtm = gaviota.probe_dtm(board)
    assert dtm < 0
    longest = keeping_the_distance(board, dtm, gaviota.probe_dtm)
    assert len(longest) < board.legal_moves.count()
    assert set(result.moves) == longest
    assert result.score == -MATE - dtm


def test_root_respects_searchmoves(tables) -> None:
    board = chess.Board(KRK_ROOK_ATTACKED)
    draws = [chess.Move.from_uci(uci) for uci in ("b2b4", "b2c2")]
    result = tables.root_moves(board, draws)
    assert set(result.moves) == set(draws) and result.score == 0


def test_reported_score_prefers_known_distances() -> None:
    won = RootResult([chess.Move.from_uci("a1a2")], TB_WIN)
    assert tablebase_score(won, 350) == TB_WIN  # heuristic: overruled
    assert tablebase_score(won, MATE - 9) == MATE - 9  # a proven mate is more precise
    exact = RootResult([chess.Move.from_uci("a1a2")], MATE - 5)
    assert tablebase_score(exact, MATE - 9) == MATE - 5


def test_reports_at_a_tablebase_root_keep_the_search_bound() -> None:
    """The tables' score replaces the search's, but a fail-high stays a bound, not a finished depth."""
    searcher = Searcher(hash_mb=1)
    searcher.tablebases = Tablebases()
    forwarded: list[Iteration] = []
    root = RootResult([chess.Move.from_uci("a1a2")], TB_WIN)
    report = searcher._tablebase_reports(forwarded.append, root, 0)
    assert report is not None
    for bound in (LOWER, UPPER, EXACT):
        report(Iteration(7, 9, 350, bound, 1000, 10.0, 0, [chess.Move.from_uci("a1a2")]))
    assert [(iteration.score, iteration.bound) for iteration in forwarded] == [
        (TB_WIN, LOWER), (TB_WIN, UPPER), (TB_WIN, EXACT)]


# --- Syzygy's DTZ ranking, on the real tables -----------------------------------------------------


@pytest.fixture(scope="module")
def referee():
    """python-chess's Syzygy prober on the same tables: the independent referee."""
    import chess.syzygy

    with chess.syzygy.open_tablebase(str(SYZYGY_DIR)) as tables:
        yield tables


@pytest.fixture
def syzygy(referee) -> Tablebases:
    tablebases = Tablebases()
    assert tablebases.set_syzygy_path(str(SYZYGY_DIR)) == ["Syzygy: 36 WDL and 36 DTZ tables, up to 5 pieces"]
    yield tablebases
    tablebases.close()


def test_dtz_rank_follows_the_fifty_move_budget() -> None:
    assert dtz_rank(5, 0) > dtz_rank(30, 0) > dtz_rank(5, 90) > 0  # nearer zeroing first
    assert is_decided(dtz_rank(20, 80))  # zeroes on ply 100: still a win
    assert not is_decided(dtz_rank(21, 80)) and dtz_rank(21, 80) > 0  # cursed: drawn by the rule
    assert dtz_score(20, 80) == TB_WIN - 20 and 0 < dtz_score(21, 80) < 50
    assert dtz_rank(-40, 0) > dtz_rank(-10, 0)  # hold out longest
    assert dtz_score(-10, 90) == -TB_WIN + 10  # zeroed by ply 100: lost
    assert -50 < dtz_score(-11, 90) < 0 and not is_decided(dtz_rank(-11, 90))  # blessed: saved by the rule
    assert dtz_rank(0, 50) == 0 == rank_score(0) == dtz_score(0, 50)


def test_syzygy_root_keeps_the_quickest_progress(syzygy, referee) -> None:
    board = chess.Board(KRK_ROOK_ATTACKED)
    result = syzygy.root_moves(board)
    dtz = referee.probe_dtz(board)
    assert dtz == 31
    quickest = keeping_the_distance(board, dtz, referee.probe_dtz)
    assert any(child_wdl(referee, board, move) == 0 for move in board.legal_moves)  # some drop the rook
    assert set(result.moves) == quickest
    assert result.score == TB_WIN - dtz
    assert syzygy.hits > 0


def test_syzygy_root_keeps_the_longest_resistance(syzygy, referee) -> None:
    board = chess.Board("1k6/8/8/R1KB4/8/3r4/8/8 b - - 0 1")  # KRBvKR
    result = syzygy.root_moves(board)
    assert (referee.probe_wdl(board), referee.probe_dtz(board)) == (-2, -90)
    assert all(child_wdl(referee, board, move) == 2 for move in board.legal_moves)  # every move loses
    assert set(result.moves) == keeping_the_distance(board, -90, referee.probe_dtz) == {chess.Move.from_uci("d3g3")}
    assert result.score == -TB_WIN + 90


def test_syzygy_root_keeps_every_draw(syzygy, referee) -> None:
    board = chess.Board("8/8/7r/8/3R4/1k6/8/K7 w - - 0 1")  # KRvKR: most moves lose
    result = syzygy.root_moves(board)
    draws = {move for move in board.legal_moves if child_wdl(referee, board, move) == 0}
    assert 0 < len(draws) < board.legal_moves.count()
    assert set(result.moves) == draws and result.score == 0


def test_syzygy_root_sees_the_capture_into_bare_kings(syzygy) -> None:
    board = chess.Board("8/8/8/8/8/2k5/1R6/4K3 b - - 0 1")  # KRvK, the rook hangs: Kxb2 draws
    result = syzygy.root_moves(board)
    assert result.moves == [chess.Move.from_uci("c3b2")] and result.score == 0


@pytest.mark.parametrize("clock, won", [(69, True), (70, False)])
def test_syzygy_root_near_the_fifty_move_rule(syzygy, referee, clock, won) -> None:
    # The quickest zeroing (the mate) is 31 plies away: on ply 100 with a
    # clock of 69, too late with 70 (a cursed win, scored barely above a draw).
    board = chess.Board(KRK_ROOK_ATTACKED.replace(" 0 1", f" {clock} 60"))
    result = syzygy.root_moves(board)
    assert referee.probe_dtz(board) == 31 and (31 + clock <= 100) == won
    assert set(result.moves) == keeping_the_distance(board, 31, referee.probe_dtz)
    assert result.score == TB_WIN - 31 if won else 0 < result.score < 50


def test_syzygy_in_tree_scores_prefer_the_nearer_win(syzygy) -> None:
    board = chess.Board("8/8/8/3k4/8/8/8/KBN5 b - - 0 1")  # just after a capture: Black is lost
    assert syzygy.probe_score(board, 3) == -TB_WIN + 3
    board.turn = chess.WHITE
    assert syzygy.probe_score(board, 2) > syzygy.probe_score(board, 4) > TB_WIN_BOUND


def test_syzygy_without_dtz_falls_back_on_gaviota(tmp_path, referee, gaviota_dir, gaviota) -> None:
    """KRvK's DTZ table is missing from the folder: the root is ranked by Gaviota's DTM instead."""
    folder = tmp_path / "syzygy"
    folder.mkdir()
    for table in SYZYGY_DIR.glob("*.rtb[wz]"):
        if table.name != "KRvK.rtbz":
            (folder / table.name).symlink_to(table)
    tablebases = Tablebases()
    try:
        assert tablebases.set_syzygy_path(str(folder)) == ["Syzygy: 36 WDL and 35 DTZ tables, up to 5 pieces"]
        board = chess.Board(KRK_ROOK_ATTACKED)
        # WDL alone: every move that keeps the win, no distance.
        result = tablebases.root_moves(board)
        assert set(result.moves) == {move for move in board.legal_moves if child_wdl(referee, board, move) == -2}
        assert TB_WIN_BOUND < result.score < MATE_BOUND
        tablebases.set_gaviota_path(str(gaviota_dir))
        result = tablebases.root_moves(board)
        assert result.score == MATE - 31  # Gaviota's exact distance
        assert set(result.moves) == keeping_the_distance(board, 31, gaviota.probe_dtm)
    finally:
        tablebases.close()


# --- the search with tables ---------------------------------------------------------------------------


def search(tablebases: Tablebases | None, fen: str, limits: Limits) -> tuple[chess.Move, list[Iteration]]:
    searcher = Searcher(1)
    searcher.tablebases = tablebases
    reports: list[Iteration] = []
    result = searcher.search(chess.Board(fen), limits, on_iteration=reports.append)
    return result.best_move, reports


def test_search_plays_the_only_winning_move(tables) -> None:
    move, reports = search(tables, KPK_ONLY_KD3, Limits(depth=4))
    assert move == chess.Move.from_uci("c2d3")
    assert reports[-1].mate_in == 21 and reports[-1].tbhits > 0


def test_search_respects_searchmoves_in_the_tables(tables) -> None:
    move, reports = search(tables, KRK_ROOK_ATTACKED, Limits(depth=3, searchmoves=["b2b4", "b2c2", "b2b6"]))
    assert move == chess.Move.from_uci("b2b6")  # the only one of them that keeps the rook
    assert reports[-1].score == MATE - 33


def test_search_probes_after_captures(tables) -> None:
    move, reports = search(tables, KQKR_CAPTURE, Limits(depth=3))
    assert move == chess.Move.from_uci("h1h2")
    assert reports[-1].tbhits > 0
    assert reports[-1].score > MATE_BOUND  # the mate after Qxh2 comes from the tables


def test_probe_limit_zero_stops_in_search_probes(tables) -> None:
    tables.probe_limit = 0
    _, reports = search(tables, KQKR_CAPTURE, Limits(depth=3))
    assert reports[-1].tbhits == 0


def test_tables_do_not_change_searches_they_cannot_help(tables) -> None:
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    plain_move, plain = search(None, fen, Limits(depth=3))
    move, reports = search(tables, fen, Limits(depth=3))
    assert (move, reports[-1].nodes, reports[-1].pv) == (plain_move, plain[-1].nodes, plain[-1].pv)
    assert reports[-1].tbhits == 0


# --- the engine: options, info, bad paths ---------------------------------------------------------------


@pytest.fixture(scope="module")
def tb_engine(engine_cmd, repo_root, engine_env, gaviota_dir):
    with guarded_engine(engine_cmd, repo_root, engine_env, guard=240.0) as engine:
        engine.configure({"OwnBook": False, "GaviotaTbPath": str(gaviota_dir)})
        yield engine


def test_options_are_declared(engine_cmd, repo_root, engine_env) -> None:
    with guarded_engine(engine_cmd, repo_root, engine_env) as engine:
        for name in ("SyzygyPath", "GaviotaTbPath"):
            assert engine.options[name].type == "string"
            assert engine.options[name].default == "<empty>"
        limit = engine.options["SyzygyProbeLimit"]
        assert (limit.type, limit.default, limit.min, limit.max) == ("spin", 7, 0, 7)


def test_tbhits_in_info(tb_engine) -> None:
    info = tb_engine.analyse(chess.Board(KQK_HARD), chess.engine.Limit(depth=3), game="tbhits")
    assert info["tbhits"] > 0
    assert info["score"].relative == chess.engine.Mate(9)


def test_engine_keeps_the_win_when_only_some_moves_win(tb_engine, gaviota) -> None:
    board = chess.Board(KRK_ROOK_ATTACKED)
    result = tb_engine.play(board, chess.engine.Limit(nodes=50), game="filter", info=chess.engine.INFO_ALL)
    assert gaviota.probe_dtm(board) == 31
    assert result.move in keeping_the_distance(board, 31, gaviota.probe_dtm), f"{result.move} is not a quickest win"
    assert result.info["score"].relative == chess.engine.Mate(16)


def test_engine_plays_the_only_winning_pawn_move(tb_engine) -> None:
    board = chess.Board(KPK_ONLY_KD3)
    assert tb_engine.play(board, chess.engine.Limit(depth=4), game="kpk").move == chess.Move.from_uci("c2d3")


@pytest.mark.parametrize("option", ["SyzygyPath", "GaviotaTbPath"])
def test_bad_path_gives_an_info_string_and_the_engine_serves_on(raw, tmp_path, option) -> None:
    raw.send(f"setoption name {option} value /no/such/tables{os.pathsep}{tmp_path}")
    messages = [line for line in raw.sync() if line.startswith("info string ")]
    assert any("/no/such/tables" in line and "not a directory" in line for line in messages), messages
    assert any(str(tmp_path) in line and "no tables" in line for line in messages), messages
    assert any("tablebases off" in line for line in messages), messages
    raw.send(f"position fen {KQK_HARD}")
    raw.send("go depth 2")
    raw.bestmove(chess.Board(KQK_HARD))
    assert raw.sync() == [] and raw.stderr() == ""


def test_empty_path_is_silent(raw) -> None:
    raw.send("setoption name SyzygyPath value <empty>")
    raw.send("setoption name SyzygyPath value")
    raw.send("setoption name SyzygyProbeLimit value 0")
    assert raw.sync() == []


# --- won endings played out to mate ------------------------------------------------------------------


def longest_defence(gaviota, board: chess.Board) -> chess.Move:
    """The defender's move that puts mate furthest off (the tables' best defence)."""
    return min(keeping_the_distance(board, gaviota.probe_dtm(board), gaviota.probe_dtm), key=lambda move: move.uci())


@pytest.mark.parametrize("defender", ["tables", "engine"])
@pytest.mark.parametrize("fen", [KQK_HARD, KRK_HARD, KRK_HARD_BLACK, KPK_ONLY_KD3],
                         ids=["kqk", "krk", "krk-black", "kpk"])
def test_engine_mates_from_a_hard_start(tb_engine, gaviota, fen, defender) -> None:
    board = chess.Board(fen)
    attacker = board.turn
    plies_to_mate = gaviota.probe_dtm(board)
    game = object()
    while not board.is_game_over() and len(board.move_stack) < 120:
        if board.turn == attacker or defender == "engine":
            move = tb_engine.play(board, chess.engine.Limit(nodes=200), game=game).move
        else:
            move = longest_defence(gaviota, board)
        assert move in board.legal_moves
        board.push(move)
    assert board.is_checkmate() and board.outcome().winner == attacker, board.fen()
    # Perfect play on both sides: mate exactly when the tables said, well inside the fifty-move rule.
    assert len(board.move_stack) == plies_to_mate
    assert board.halfmove_clock < 100
