"""Staged move generation yields every legal move exactly once, in stage order."""
from __future__ import annotations

import chess
import pytest
from hypothesis import given, settings
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
