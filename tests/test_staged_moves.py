"""Staged move generation yields every legal move exactly once, in stage order; told that
only checks will be searched among the rest of the quiet moves, it yields those alone, in the
same order."""
from __future__ import annotations

import chess
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from search.movepick import staged_moves
from search.ordering import MoveOrderer
from search.position import Position
from search.tt import encode_move
from tests.strategies import boards


def staged(board: chess.Board, hash_move: chess.Move | None = None) -> list[chess.Move]:
    return list(staged_moves(Position(board), MoveOrderer(), encode_move(hash_move), 1, board.is_check()))


def assert_complete(board: chess.Board, hash_move: chess.Move | None = None) -> list[chess.Move]:
    moves = staged(board, hash_move)
    assert sorted(m.uci() for m in moves) == sorted(m.uci() for m in board.legal_moves), board.fen()
    if hash_move is not None:
        assert moves[0] == hash_move
    return moves


@settings(max_examples=200, deadline=None)
@given(boards(), st.data())
def test_every_legal_move_once(board: chess.Board, data: st.DataObject) -> None:
    legal = list(board.legal_moves)
    hash_move = data.draw(st.sampled_from(legal)) if legal and data.draw(st.booleans()) else None
    assert_complete(board, hash_move)


@pytest.mark.parametrize("fen, chess960", [
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", False),  # both castlings
    ("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1", True),  # Chess960 castling (king takes rook)
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", False),  # en passant
    ("1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1", False),  # promotions, with and without capture
])
def test_special_moves(fen: str, chess960: bool) -> None:
    assert_complete(chess.Board(fen, chess960=chess960))


def test_stage_order_good_captures_quiets_losing_captures() -> None:
    # Nxe4 is an even trade; Qxd5 loses the queen for a pawn.
    board = chess.Board("4k3/8/4p3/3p4/4n3/2N5/8/3QK3 w - - 0 1")
    moves = [m.uci() for m in assert_complete(board)]
    assert moves[0] == "c3e4"
    assert moves[-1] == "d1d5"
    assert moves.index("e1e2") < moves.index("c3d5")


def quiet_checks_only_after(board: chess.Board, moves: list[chess.Move], hash_move: chess.Move | None,
                            kept: int) -> list[chess.Move]:
    """`moves` (the full staged order) less the quiet moves after the first `kept` that give no check."""
    result = []
    quiets = 0
    for move in moves:
        if move != hash_move and not board.is_capture(move) and not move.promotion:
            quiets += 1
            if quiets > kept and not board.gives_check(move):
                continue
        result.append(move)
    return result


@settings(max_examples=200, deadline=None)
@given(boards(), st.data())
def test_checks_only_keeps_the_checks_in_their_order(board: chess.Board, data: st.DataObject) -> None:
    assume(not board.is_check())
    legal = list(board.legal_moves)
    hash_move = data.draw(st.sampled_from(legal)) if legal and data.draw(st.booleans()) else None
    full = staged(board, hash_move)
    quiet_count = sum(1 for m in full if m != hash_move and not board.is_capture(m) and not m.promotion)
    kept = data.draw(st.integers(0, quiet_count))  # quiet moves yielded before the flag is set
    flag = [kept == 0]
    picker = staged_moves(Position(board), MoveOrderer(), encode_move(hash_move), 1, False, flag)
    got = []
    quiets = 0
    for move in picker:
        got.append(move)
        if move != hash_move and not board.is_capture(move) and not move.promotion:
            quiets += 1
            if quiets == kept:
                flag[0] = True
    assert got == quiet_checks_only_after(board, full, hash_move, kept), board.fen()


@pytest.mark.parametrize("fen", [
    "4k3/8/8/8/8/8/4N3/4R1K1 w - - 0 1",          # knight moves discover the rook's check
    "4k3/8/8/8/4K3/8/8/4R3 w - - 0 1",            # the king steps off the file: discovered check
    "5k2/8/8/8/8/8/8/4K2R w K - 0 1",             # castling gives check
    "r3k2r/pppq1ppp/2n2n2/3pp3/1b2P3/2NP1N2/PPPB1PPP/R2QKB1R w KQkq - 0 1",  # a quiet middlegame
])
def test_checks_only_from_the_start(fen: str) -> None:
    board = chess.Board(fen)
    full = staged(board)
    got = list(staged_moves(Position(board), MoveOrderer(), 0, 1, False, [True]))
    assert got == quiet_checks_only_after(board, full, None, 0)
    assert any(board.gives_check(m) for m in got) == any(board.gives_check(m) for m in full)
