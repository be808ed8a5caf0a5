"""`search.boardpush.push_plain` leaves exactly the board python-chess's `Board.push` leaves, and `pop_plain` the board `Board.pop` leaves."""

from __future__ import annotations

import random

import chess
import pytest

from search.boardpush import Snapshot, pop_plain, push_plain
from search.position import Position

_FIELDS = ("pawns", "knights", "bishops", "rooks", "queens", "kings", "occupied", "promoted",
           "turn", "castling_rights", "ep_square", "halfmove_clock", "fullmove_number")


def _state(board: chess.Board) -> tuple:
    """Every field `Board.push` changes, and the move stack."""
    return tuple(getattr(board, name) for name in _FIELDS), tuple(board.occupied_co), tuple(board.move_stack)


def _pieces(board: chess.Board, move: chess.Move) -> tuple[chess.PieceType, chess.PieceType | None, chess.Square]:
    """The mover, the captured piece and its square, as `Position.push` finds them."""
    piece = board.piece_type_at(move.from_square)
    if board.is_en_passant(move):
        return piece, chess.PAWN, move.to_square - 8 if board.turn else move.to_square + 8
    return piece, board.piece_type_at(move.to_square), move.to_square


def _check_game(board: chess.Board, rng: random.Random, plies: int) -> int:
    """Play random legal moves both ways side by side, then take them all back; return how many went through `push_plain`."""
    ours = board.copy()
    snapshots: list[Snapshot | None] = []  # push_plain's answer, None for python-chess's own push
    inlined = 0
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        # Favour the rare cases: captures, promotions, pawn double steps, king and rook moves.
        special = [m for m in moves if board.is_capture(m) or m.promotion or board.piece_type_at(m.from_square)
                   in (chess.KING, chess.ROOK) or abs(m.to_square - m.from_square) == 16]
        move = rng.choice(special if special and rng.random() < 0.6 else moves)
        board.push(move)
        if ours.is_castling(move):
            ours.push(move)
            snapshots.append(None)
        else:
            snapshots.append(push_plain(ours, move, *_pieces(ours, move)))
            inlined += 1
        assert _state(ours) == _state(board), (board.fen(), move)
    while board.move_stack:  # each push taken back by its own pop, the two kinds interleaved
        snapshot = snapshots.pop()
        assert board.pop() == (ours.pop() if snapshot is None else pop_plain(ours, snapshot))
        assert _state(ours) == _state(board), board.fen()
    return inlined


@pytest.mark.slow  # hundreds of random games, move by move: about 10-20 s
def test_random_games_match_python_chess() -> None:
    rng = random.Random(50)
    inlined = 0
    for game in range(120):
        board = chess.Board()
        if game % 3 == 1:
            board = chess.Board.from_chess960_pos(rng.randrange(960))
        inlined += _check_game(board, rng, 160)
    assert inlined > 5000


@pytest.mark.parametrize("fen", [
    "r3k2r/1P4P1/8/3pP3/8/8/1p4p1/R3K2R w KQkq d6 0 40",  # en passant, promotions with capture, castling rights
    "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 7 12",  # rook and king moves take rights away
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",  # a first push: rights filtered as python-chess does
    "4k3/8/8/8/8/8/8/R3K2R w AH - 0 1",  # rights given in Shredder notation
])
def test_tricky_positions(fen: str) -> None:
    rng = random.Random(fen)
    for _ in range(20):
        _check_game(chess.Board(fen), rng, 40)


def test_position_takes_the_inlined_push_only_on_a_plain_board(monkeypatch: pytest.MonkeyPatch) -> None:
    """A board subclass (a variant) keeps python-chess's own push, and still gives the same position."""

    class Subclass(chess.Board):
        pass

    calls = []

    def counted(*args: object) -> Snapshot:
        calls.append(args)
        return push_plain(*args)  # type: ignore[arg-type]

    monkeypatch.setattr("search.position.push_plain", counted)
    for board in (chess.Board(), Subclass()):
        calls.clear()
        pos = Position(board)
        for uci in ("e2e4", "d7d5", "e4d5", "g8f6", "f1b5", "c7c6", "g1f3", "c6b5", "e1g1"):
            pos.push(chess.Move.from_uci(uci))
        assert pos._plain == (type(board) is chess.Board)
        # Every move but the castling went through the inlined push on the plain board, none on the subclass.
        assert len(calls) == (8 if type(board) is chess.Board else 0)
        assert board.fen() == "rnbqkb1r/pp2pppp/5n2/1p1P4/8/5N2/PPPP1PPP/RNBQ1RK1 b kq - 1 5"
        assert pos.key == chess.polyglot.zobrist_hash(board)
        while board.move_stack:  # and each kind of push is taken back by its own pop
            pos.pop()
        assert board == chess.Board() and pos.key == chess.polyglot.zobrist_hash(board)
