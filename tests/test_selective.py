"""Selective search: quiet-move pruning (on since its SPRT) and what it stands on.

`Position.gives_check` and `Position.quiet_check_test` are checked against
python-chess on every legal move of random games; the `PAWNSTORM_FEATURES`
switch a match uses to turn a feature on or off is checked through the engine.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Iterator

import chess
import pytest

from search.driver import Searcher
from search.features import Features
from search.movepick import quiet_moves
from search.position import Position
from search.timeman import Limits
from search.types import MATE
from uci_engine.options import FEATURES_VARIABLE, search_features

PRUNING = Features(quiet_pruning=True)
NO_PRUNING = Features(quiet_pruning=False)
SUITES = Path(__file__).resolve().parent.parent / "data" / "suites"


def random_game_positions(seed: int, chess960: bool) -> Iterator[tuple[chess.Board, Position]]:
    """The positions of 40 random games (up to 100 plies each), with a `Position` that played along."""
    rng = random.Random(seed)
    for game in range(40):
        board = chess.Board(chess960=chess960)
        if chess960:
            board.set_chess960_pos(rng.randrange(960))
        pos = Position(board)
        for _ in range(100):
            moves = list(board.legal_moves)
            if not moves:
                break
            yield board, pos
            pos.push(rng.choice(moves))


@pytest.mark.parametrize("chess960", [False, True])
def test_gives_check_agrees_with_python_chess(chess960: bool) -> None:
    checks = asked = 0
    for board, pos in random_game_positions(7 + chess960, chess960):
        for move in board.legal_moves:
            expected = board.gives_check(move)
            assert pos.gives_check(move) == expected, (board.fen(), move.uci())
            checks += expected
            asked += 1
    assert checks > 100 and asked > 10_000  # the random games did give checks


@pytest.mark.parametrize("chess960", [False, True])
def test_quiet_check_test_agrees_with_python_chess(chess960: bool) -> None:
    checks = asked = 0
    for board, pos in random_game_positions(17 + chess960, chess960):
        if board.is_check():
            continue  # asked only where quiet moves are pruned
        gives_check, reach = pos.quiet_check_test()
        for move in board.legal_moves:
            expected = board.gives_check(move)
            assert gives_check(move) == expected, (board.fen(), move.uci())
            checks += expected
            asked += 1
        # The squares it names hold every quiet check, so a generator may be asked for those alone.
        expected_quiets = [move for move in quiet_moves(board) if board.gives_check(move)]
        assert [move for move in quiet_moves(board, reach) if gives_check(move)] == expected_quiets
    assert checks > 100 and asked > 10_000


@pytest.mark.parametrize("fen, move", [
    ("4k3/8/8/8/8/8/4B3/4R1K1 w - - 0 1", "e2b5"),       # discovered check by the rook, direct by the bishop
    ("4k3/8/8/8/8/8/4N3/4R1K1 w - - 0 1", "e2c3"),       # discovered check only
    ("4k3/8/8/8/4K3/8/8/4R3 w - - 0 1", "e4d4"),         # the king discovers the rook's check
    ("4k3/8/8/8/4K3/8/8/4R3 w - - 0 1", "e4e3"),         # the king stays on the file: no check
    ("4k3/4P3/8/8/8/8/8/4R1K1 w - - 0 1", "g1f2"),       # a pawn blocks the file: no check
    ("4k3/8/3P4/8/8/8/8/6K1 w - - 0 1", "d6d7"),         # a pawn's check
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5e6"),       # a pawn's push on the king's file
    ("8/8/8/k1pP3R/8/8/8/4K3 w - c6 0 1", "d5c6"),        # en passant opens the rank: discovered check
    ("r3k2r/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1"),         # castling without check
    ("5k2/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1"),           # castling gives check along the f-file
    ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8q"),         # promotion with check along the rank
    ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8n"),         # an underpromotion without check
])
def test_gives_check_special_moves(fen: str, move: str) -> None:
    board = chess.Board(fen)
    parsed = chess.Move.from_uci(move)
    assert parsed in board.legal_moves
    pos = Position(board)
    assert pos.gives_check(parsed) == board.gives_check(parsed)
    assert pos.quiet_check_test()[0](parsed) == board.gives_check(parsed)


MIDDLEGAMES = [
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N2N2/PP2BPPP/R2QKB1R w KQ - 0 9",
    "r2q1rk1/1b2bppp/p2p1n2/1pn1p3/4P3/1BN2N1P/PPP2PP1/R1BQR1K1 w - - 0 12",
    "2rq1rk1/pb1nbppp/1p2pn2/2pp4/3P4/1P1BPN2/PBPN1PPP/R2Q1RK1 w - - 0 11",
]


@pytest.mark.parametrize("fen", MIDDLEGAMES)
def test_quiet_pruning_searches_fewer_nodes_and_plays_legal_moves(fen: str) -> None:
    board = chess.Board(fen)
    full = Searcher(1, NO_PRUNING).search(board, Limits(depth=5))
    pruned = Searcher(1, PRUNING).search(board, Limits(depth=5))
    assert pruned.nodes < full.nodes
    assert pruned.best_move in board.legal_moves
    assert abs(pruned.score - full.score) < 300  # a pruned tree, not a different game


@pytest.mark.parametrize("fen", open(SUITES / "mate2.fen").read().splitlines()[:12])
def test_quiet_pruning_keeps_the_mates(fen: str) -> None:
    """Mates in two (the bundled suite's first twelve), whose lines run
    through the shallow nodes where pruning looks: checks are never skipped."""
    board = chess.Board(fen)
    pruned = Searcher(1, PRUNING).search(board, Limits(depth=4))
    assert pruned.score == MATE - 3


def test_quiet_pruning_is_on_by_default_and_off_in_the_exact_search() -> None:
    assert Features().quiet_pruning
    assert not Features.exact().quiet_pruning
    assert not Features().with_spec("-quiet_pruning")[0].quiet_pruning


def test_feature_spec_turns_switches_on_and_off() -> None:
    features, problems = Features().with_spec("-quiet_pruning, -null_move,aspiration=0 +pvs")
    assert problems == []
    assert not features.quiet_pruning and not features.null_move and not features.aspiration and features.pvs
    same, problems = Features().with_spec("")
    assert same == Features() and problems == []


def test_feature_spec_names_what_it_cannot_use() -> None:
    features, problems = Features().with_spec("-quiet_pruning,warp_drive,null_move=maybe")
    assert not features.quiet_pruning and features.null_move
    assert len(problems) == 2
    assert "warp_drive" in problems[0] and "null_move=maybe" in problems[1]


def test_engine_reads_its_switches_from_the_environment() -> None:
    features, problems = search_features({FEATURES_VARIABLE: "-quiet_pruning"})
    assert not features.quiet_pruning and problems == []
    features, problems = search_features({})
    assert features == Features() and problems == []
    _, problems = search_features({FEATURES_VARIABLE: "nonsense"})
    assert problems and problems[0].startswith(FEATURES_VARIABLE)


def test_uci_handshake_names_a_bad_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_uci_protocol import Harness
    monkeypatch.setenv(FEATURES_VARIABLE, "-quiet_pruning,nonsense")
    harness = Harness()
    try:
        assert not harness.engine.searcher.features.quiet_pruning
        harness.send("uci")
        assert any("nonsense" in line for line in harness.info_strings())
        assert harness.lines()[-1] == "uciok"
    finally:
        harness.close()
