"""MultiPV: the k-th line is the k-th best root move, reported best first."""
from __future__ import annotations

import chess
import chess.engine
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from search.driver import Iteration, Searcher
from search.features import Features
from search.timeman import Limits
from tests.reference import minimax
from tests.strategies import boards
from tests.test_client import MIDDLEGAME, info_strings
from tests.uci_process import guarded_engine


def final_lines(board: chess.Board, depth: int, multipv: int, features: Features = Features()) -> list[Iteration]:
    """The lines reported for the last depth of a fixed-depth MultiPV search."""
    reported: list[Iteration] = []
    Searcher(1, features).search(board, Limits(depth=depth), on_iteration=reported.append, multipv=multipv)
    last = [line for line in reported if line.depth == depth and not line.partial]
    return last[-min(multipv, board.legal_moves.count()):]


def root_values(board: chess.Board, depth: int) -> list[int]:
    """Each root move's minimax value, best first: what exact MultiPV must report."""
    values = []
    for move in board.legal_moves:
        board.push(move)
        values.append(-minimax(board, depth - 1, 1))
        board.pop()
    return sorted(values, reverse=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=boards(), depth=st.integers(min_value=1, max_value=2), multipv=st.integers(min_value=2, max_value=5))
def test_exact_multipv_scores_are_the_best_root_values(board: chess.Board, depth: int, multipv: int) -> None:
    lines = final_lines(board, depth, multipv, Features.exact())
    expected = root_values(board, depth)[:multipv]
    assert [line.score for line in lines] == expected
    assert [line.multipv for line in lines] == list(range(1, len(expected) + 1))
    first_moves = [line.pv[0] for line in lines]
    assert len(set(first_moves)) == len(first_moves)


def test_multipv_one_line_matches_single_pv() -> None:
    board = chess.Board(MIDDLEGAME)
    single = Searcher(1, Features.exact()).search(board, Limits(depth=3))
    lines = final_lines(board, 3, 4, Features.exact())
    assert lines[0].score == single.score


def test_multipv_more_lines_than_moves() -> None:
    board = chess.Board("7k/8/8/8/8/8/8/K7 w - - 0 1")  # three king moves
    lines = final_lines(board, 2, 10)
    assert len(lines) == 3
    assert {line.pv[0] for line in lines} == set(board.legal_moves)


def test_multipv_through_the_client(engine_cmd, repo_root, engine_env) -> None:
    board = chess.Board(MIDDLEGAME)
    with guarded_engine(engine_cmd, repo_root, engine_env) as engine:
        infos = engine.analyse(board, chess.engine.Limit(depth=4), multipv=3)
    assert len(infos) == 3
    moves = [info["pv"][0] for info in infos]
    assert len(set(moves)) == 3 and all(move in board.legal_moves for move in moves)
    scores = [info["score"].relative.score(mate_score=100000) for info in infos]
    assert scores == sorted(scores, reverse=True)
    assert [info["multipv"] for info in infos] == [1, 2, 3]


def test_multipv_does_not_change_the_move_played(raw) -> None:
    """With several lines the engine still plays its best line's move.

    (python-chess manages MultiPV itself and refuses it in `play`, so this
    talks UCI directly.)
    """
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")  # Rd8 is mate
    raw.send("setoption name MultiPV value 3")
    raw.send(f"position fen {board.fen()}")
    raw.send("go depth 3")
    move, lines = raw.bestmove(board)
    assert move == chess.Move.from_uci("d1d8")
    assert any(" multipv 3 " in line for line in lines)


@pytest.mark.parametrize("value, warning", [("0", True), ("3", False), ("9999", True)])
def test_multipv_option_range(raw, value: str, warning: bool) -> None:
    raw.send(f"setoption name MultiPV value {value}")
    lines = raw.sync()
    assert any("MultiPV" in line for line in info_strings(lines)) == warning


def test_currmove_announces_every_root_move(monkeypatch) -> None:
    import search.driver
    monkeypatch.setattr(search.driver, "CURRMOVE_AFTER_MS", 0)
    board = chess.Board(MIDDLEGAME)
    seen: list[tuple[chess.Move, int, int]] = []
    Searcher(1).search(board, Limits(depth=2), on_currmove=lambda *args: seen.append(args))
    for depth in (1, 2):
        numbers = [number for _, number, d in seen if d == depth]
        assert numbers == list(range(1, board.legal_moves.count() + 1))
        assert {move for move, _, d in seen if d == depth} == set(board.legal_moves)


def test_currmove_in_a_long_search(raw) -> None:
    """After a few seconds an infinite search names the root move it is on."""
    raw.send(f"position fen {MIDDLEGAME}")
    raw.send("go infinite")
    line = ""
    while " currmove " not in line:
        line, _ = raw.expect("info")
    raw.send("stop")
    raw.bestmove(chess.Board(MIDDLEGAME))
    fields = line.split()
    move = chess.Move.from_uci(fields[fields.index("currmove") + 1])
    assert move in chess.Board(MIDDLEGAME).legal_moves
    assert int(fields[fields.index("currmovenumber") + 1]) >= 1


def test_searchmoves_through_the_client(engine_cmd, repo_root, engine_env) -> None:
    """python-chess's `root_moves` becomes `go searchmoves`: only those are considered."""
    board = chess.Board(MIDDLEGAME)
    allowed = [chess.Move.from_uci("a2a3"), chess.Move.from_uci("h2h3")]
    with guarded_engine(engine_cmd, repo_root, engine_env) as engine:
        engine.configure({"OwnBook": False})
        infos = engine.analyse(board, chess.engine.Limit(depth=3), multipv=3, root_moves=allowed)
        played = engine.play(board, chess.engine.Limit(depth=3), root_moves=allowed)
    assert len(infos) == 2 and {info["pv"][0] for info in infos} == set(allowed)
    assert played.move in allowed


def test_currmove_through_the_client(engine_cmd, repo_root, engine_env) -> None:
    board = chess.Board(MIDDLEGAME)
    with guarded_engine(engine_cmd, repo_root, engine_env) as engine:
        with engine.analysis(board) as analysis:
            for info in analysis:
                if "currmove" in info:
                    break
    assert info["currmove"] in board.legal_moves and info["currmovenumber"] >= 1
