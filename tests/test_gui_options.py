"""Options analysis GUIs set: UCI_AnalyseMode (and, below, the other UCI_* options)."""
from __future__ import annotations

import chess
import chess.engine
import pytest



def test_analyse_mode_searches_instead_of_using_the_book(engine) -> None:
    engine.configure({"UCI_AnalyseMode": True})
    result = engine.play(chess.Board(), chess.engine.Limit(white_clock=2, black_clock=2),
                         info=chess.engine.INFO_ALL)
    assert result.move in chess.Board().legal_moves
    assert not result.info.get("string", "").startswith("book move"), result.info
    assert "depth" in result.info


# --- UCI_Chess960 ------------------------------------------------------------------


def castling_path(board: chess.Board, color: chess.Color) -> chess.Bitboard:
    """Squares that must be empty before `color` may castle: what king and rook cross and where they land."""
    king = board.king(color)
    back_rank = chess.BB_RANK_1 if color == chess.WHITE else chess.BB_RANK_8
    path = 0
    for rook in chess.scan_forward(board.castling_rights & back_rank):
        king_to, rook_to = (chess.G1, chess.F1) if rook > king else (chess.C1, chess.D1)
        if color == chess.BLACK:
            king_to, rook_to = chess.square_mirror(king_to), chess.square_mirror(rook_to)
        travel = (chess.between(king, rook) | chess.between(king, king_to) | chess.between(rook, rook_to)
                  | chess.BB_SQUARES[king_to] | chess.BB_SQUARES[rook_to])
        path |= travel & ~(chess.BB_SQUARES[king] | chess.BB_SQUARES[rook])
    return path


def castling_keeping(board: chess.Board) -> list[chess.Move]:
    """Moves that keep every castling right: no castling, no king move, no castling-rook move."""
    return [move for move in board.legal_moves
            if not board.is_castling(move) and move.from_square != board.king(board.turn)
            and not chess.BB_SQUARES[move.from_square] & board.castling_rights]


def castling_clearing(board: chess.Board, *, off_path: bool = True) -> list[chess.Move]:
    """Rights-keeping moves that do not block castling more: off the squares it needs (or, with
    `off_path` false, any that stay off them)."""
    path = castling_path(board, board.turn)
    return [move for move in castling_keeping(board) if not chess.BB_SQUARES[move.to_square] & path
            and (not off_path or chess.BB_SQUARES[move.from_square] & path)]


def played_again(board: chess.Board, move: chess.Move) -> chess.Board:
    """The position after `move` with the same side to move: a plan the opponent lets happen."""
    after = board.copy(stack=False)
    after.push(move)
    after.turn = board.turn
    return after


def can_clear(board: chess.Board, plies: int) -> bool:
    """Whether the side to move can take a piece off the castling squares within `plies` more moves of its own."""
    return bool(castling_clearing(board)) or plies > 0 and any(
        can_clear(played_again(board, move), plies - 1) for move in castling_clearing(board, off_path=False))


def castling_steer(board: chess.Board) -> list[chess.Move] | None:
    """The root moves that lead the side to move towards castling, whatever the engine's taste.

    Castle when legal; else clear a square castling needs; else make the first move of the
    shortest plan (up to three own moves) that clears one, such as a pawn move that frees a
    boxed-in bishop; else just keep the rights.
    """
    castling = [move for move in board.legal_moves if board.is_castling(move)]
    if castling:
        return castling
    keeping = castling_clearing(board, off_path=False) or castling_keeping(board)
    for plies in range(-1, 3):
        towards = castling_clearing(board) if plies < 0 else [
            move for move in keeping if can_clear(played_again(board, move), plies)]
        if towards:
            return towards
    return keeping or None


@pytest.mark.parametrize("start", [0, 518, 959, 123, 253])
def test_chess960_game_through_the_client(engine, start: int) -> None:
    """Fischer random games from several starts: every move the engine plays is legal, castling included.

    python-chess sets UCI_Chess960 itself for a chess960 board and checks
    the king-takes-rook castling notation of every `bestmove`.
    """
    board = chess.Board.from_chess960_pos(start)
    castled = {chess.WHITE: 0, chess.BLACK: 0}
    while not board.is_game_over() and board.ply() < 60:
        # Each side is steered (searchmoves) towards castling until it has castled, so every
        # game castles: the notation is exercised both ways, in `go searchmoves` and in `bestmove`.
        root_moves = None
        if not castled[board.turn] and board.has_castling_rights(board.turn):
            root_moves = castling_steer(board)
        result = engine.play(board, chess.engine.Limit(nodes=300 + 50 * (board.ply() % 5)), root_moves=root_moves)
        assert result.move in board.legal_moves, (board.fen(), result.move)
        if root_moves:
            assert result.move in root_moves, (board.fen(), result.move)
        castled[board.turn] += board.is_castling(result.move)
        board.push(result.move)
    assert castled[chess.WHITE] + castled[chess.BLACK] >= 1, f"no castling in {board.fen()}"


def test_chess960_castling_notation(raw) -> None:
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


# --- UCI_ShowWDL -------------------------------------------------------------------


def test_show_wdl_through_the_client(engine) -> None:
    """With UCI_ShowWDL the client gets win/draw/loss chances that follow the score."""
    engine.configure({"UCI_ShowWDL": True})
    winning = chess.Board("4k3/8/8/8/8/8/8/QQ2K3 w - - 0 1")
    level = chess.Board()
    infos = [engine.analyse(board, chess.engine.Limit(depth=3)) for board in (winning, level)]
    for info in infos:
        chances = info["wdl"].relative
        assert chances.wins + chances.draws + chances.losses == 1000
    assert infos[0]["wdl"].relative.expectation() > 0.9
    assert 0.3 < infos[1]["wdl"].relative.expectation() < 0.7


def test_wdl_is_off_by_default(engine) -> None:
    info = engine.analyse(chess.Board(), chess.engine.Limit(depth=2))
    assert "wdl" not in info


def test_wdl_model_is_monotonic_and_symmetric() -> None:
    from eval.wdl import MATERIAL_MAX, MATERIAL_MIN, wdl
    for count in (MATERIAL_MIN, 40, MATERIAL_MAX):
        previous = -1
        for score in range(-1000, 1001, 50):
            win, draw, loss = wdl(score, count)
            assert min(win, draw, loss) >= 0 and win + draw + loss == 1000
            assert win >= previous
            previous = win
            assert wdl(-score, count) == (loss, draw, win)
    assert wdl(0, 40, mate_in=3) == (1000, 0, 0)
    assert wdl(0, 40, mate_in=-2) == (0, 0, 1000)
