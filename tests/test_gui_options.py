"""Options analysis GUIs set: UCI_AnalyseMode (and, below, the other UCI_* options)."""
from __future__ import annotations

import chess
import chess.engine
import pytest

from tests.test_client import engine, raw  # noqa: F401 (fixtures)


def test_analyse_mode_searches_instead_of_using_the_book(engine) -> None:  # noqa: F811
    engine.configure({"UCI_AnalyseMode": True})
    result = engine.play(chess.Board(), chess.engine.Limit(white_clock=2, black_clock=2),
                         info=chess.engine.INFO_ALL)
    assert result.move in chess.Board().legal_moves
    assert not result.info.get("string", "").startswith("book move"), result.info
    assert "depth" in result.info


# --- UCI_Chess960 ------------------------------------------------------------------


@pytest.mark.parametrize("start", [0, 518, 959, 123])
def test_chess960_game_through_the_client(engine, start: int) -> None:  # noqa: F811
    """Fischer random games from several starts: every move the engine plays is legal.

    python-chess sets UCI_Chess960 itself for a chess960 board and checks
    the king-takes-rook castling notation of every `bestmove`.
    """
    board = chess.Board.from_chess960_pos(start)
    castled = 0
    while not board.is_game_over() and board.ply() < 60:
        result = engine.play(board, chess.engine.Limit(nodes=300 + 50 * (board.ply() % 5)))
        assert result.move in board.legal_moves, (board.fen(), result.move)
        castled += board.is_castling(result.move)
        board.push(result.move)
    assert board.ply() > 0


def test_chess960_castling_notation(raw) -> None:  # noqa: F811
    """Castling is read and written as king-takes-rook once UCI_Chess960 is on."""
    fen = "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1"  # king e1, rooks b1 g1
    raw.send("setoption name UCI_Chess960 value true")
    raw.send(f"position fen {fen} moves e1g1 e8b8")
    raw.send("d")
    lines = raw.sync()
    fen_line = next(line for line in lines if line.startswith("Fen: "))
    assert fen_line.split()[1] == "2kr2r1/pppppppp/8/8/8/8/PPPPPPPP/1R3RK1", lines
    board = chess.Board(fen, chess960=True)
    raw.send(f"position fen {fen}")
    raw.send("go depth 2 searchmoves e1b1")
    move, _ = raw.bestmove(board)
    assert move == chess.Move.from_uci("e1b1") and board.is_castling(move)
