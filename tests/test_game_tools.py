"""tools.selfplay and tools.clock play their games through tools.match_game's one loop and its per-move hook; tools.clock also reads a match's PGN."""
from __future__ import annotations

import gzip
import shlex
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from tests.conftest import REPO_ROOT, STOCKFISH
from tools import clock, selfplay
from tools.match_game import EngineSpec, Job, Move, play_game, rules

FAKE = [sys.executable, str(REPO_ROOT / "tests" / "fake_uci.py"), "legal"]


def test_the_hook_sees_every_move_before_it_is_played() -> None:
    engine = EngineSpec("fake", FAKE)
    seen: list[Move] = []
    result = play_game(Job(0, 0, engine, engine, chess.Board()), rules(nodes=10, max_plies=12), seen.append)
    assert result.reason == "max plies" and len(seen) == 12
    board = chess.Board()
    for played in seen:
        assert played.board == board and played.move in board.legal_moves and played.clock_left is None
        board.push(played.move)


def test_rules_start_from_the_match_defaults_and_refuse_unknown_names() -> None:
    assert rules().resign_score == 700 and rules(nodes=5).nodes == 5
    with pytest.raises(TypeError, match="warp"):
        rules(warp=9)


def test_the_clock_tool_records_think_time_and_clock_left() -> None:
    record = clock.play_clock_game(shlex.join(FAKE), chess.Board(), "5+0.05", 10)
    assert len(record) == 10
    assert [number for number, _, _ in record] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert all(0 <= spent < 5 and 0 < left <= 5 + 0.05 * number for number, spent, left in record)


def _timed_game(white: str, black: str, times: list[tuple[float, float]], fen: str | None = None) -> str:
    """A PGN game whose moves carry [%emt] and [%clk], as tools.match --pgn writes them."""
    game = chess.pgn.Game()
    game.headers["White"], game.headers["Black"] = white, black
    if fen:
        game.setup(chess.Board(fen))
    node = game
    for spent, left in times:
        move = next(iter(node.board().legal_moves))
        node = node.add_variation(move)
        node.set_emt(spent)
        node.set_clock(left)
    return str(game)


def test_the_clock_tool_reads_a_match_s_pgn_by_engine_and_stage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A game from move 1 (White "a" moves 1-2, Black "b"), and one with the names swapped from
    # a position at move 10, so that "a"'s second game lands in two stages.
    first = _timed_game("a", "b", [(1.0, 9.0), (2.0, 8.0), (3.0, 6.0), (4.0, 4.0)])
    second = _timed_game("b", "a", [(0.5, 9.5), (0.25, 9.75), (0.5, 9.0), (0.75, 9.0)],
                         fen="4k3/8/8/8/8/8/8/4K3 w - - 0 10")
    (tmp_path / "one.pgn").write_text(first + "\n\n")
    with gzip.open(tmp_path / "two.pgn.gz", "wt") as handle:
        handle.write(second + "\n\n")
    records = clock.pgn_records(tmp_path / "one.pgn")
    assert records == {"a": [(1, 1.0, 9.0), (2, 3.0, 6.0)], "b": [(1, 2.0, 8.0), (2, 4.0, 4.0)]}
    assert clock.pgn_records(tmp_path / "two.pgn.gz") == {"b": [(10, 0.5, 9.5), (11, 0.5, 9.0)],
                                                           "a": [(10, 0.25, 9.75), (11, 0.75, 9.0)]}
    clock.main(["--pgn", str(tmp_path / "one.pgn"), str(tmp_path / "two.pgn.gz")])
    out = capsys.readouterr().out.splitlines()
    assert [out[0], out[4]] == ["a", "b"] and len(out) == 8

    def table(lines: list[str]) -> dict[str, list[str]]:
        return {line.split("|")[0].strip(): [cell.strip() for cell in line.split("|")[1:]] for line in lines}

    # "a" moved at moves 1, 2 and 10 (stage 1-10) and 11; "b" likewise.
    assert table(out[2:4]) == {"1-10": ["3", "1.417", "8.25"], "11-20": ["1", "0.750", "9.00"]}
    assert table(out[6:8]) == {"1-10": ["3", "2.167", "7.17"], "11-20": ["1", "0.500", "9.00"]}


def test_the_clock_tool_says_when_a_pgn_has_no_clock_comments(tmp_path: Path) -> None:
    (tmp_path / "bare.pgn").write_text('[White "a"]\n[Black "b"]\n\n1. e4 e5 *\n\n')
    with pytest.raises(SystemExit) as stop:
        clock.main(["--pgn", str(tmp_path / "bare.pgn")])
    assert stop.value.code == 2


@pytest.mark.skipif(STOCKFISH is None, reason="Stockfish is not installed (apt-get install stockfish)")
def test_self_play_annotates_every_move_with_the_movers_score() -> None:
    game = selfplay.play_selfplay_game([STOCKFISH], chess.Board(), 200, seed=1)
    moves = list(game.mainline())
    assert moves and all(node.eval() is not None for node in moves)
    assert game.headers["Result"] in ("1-0", "0-1", "1/2-1/2") and game.headers["Event"] == "Self-play, 200 nodes"
    assert len(moves) <= selfplay.MAX_PLIES
