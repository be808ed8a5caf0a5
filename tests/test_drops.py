"""tools.drops: where an engine's lost games were decided, read from the opponent's evaluations."""
from __future__ import annotations

from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest

from tests.conftest import STOCKFISH
from tools import drops


def scripted_game(white: str, black: str, result: str, black_evals: list[float]) -> chess.pgn.Game:
    """A game of first legal moves in which Black's moves carry `black_evals` (White's side, in pawns)."""
    game = chess.pgn.Game()
    game.headers.update(White=white, Black=black, Result=result)
    node: chess.pgn.GameNode = game
    for value in black_evals:
        for _ in range(2):  # White's move (no evaluation), then Black's
            board = node.board()
            node = node.add_variation(next(iter(board.legal_moves)))
        node.set_eval(chess.engine.PovScore(chess.engine.Cp(round(value * 100)), chess.WHITE))
    return game


def test_a_lost_game_is_decided_where_the_opponent_s_evaluation_passes_the_bar() -> None:
    # ps (White) loses to sf (Black): sf's evaluation, from its side, 0.1, 0.3, 1.8, 2.5.
    game = scripted_game("ps", "sf", "0-1", [-0.1, -0.3, -1.8, -2.5, -3.0])
    loss = drops.losses(game, "ps", decided=2.0, drop=1.5)
    assert loss is not None
    assert loss.decided_at == 4 and loss.largest_rise == pytest.approx(1.5)
    # The drop is ps's third move, in the position before it.
    board = game.board()
    moves = list(game.mainline_moves())
    for move in moves[:4]:
        board.push(move)
    assert loss.drop == (board.fen(), moves[4])


def test_games_not_lost_or_not_played_are_left_out() -> None:
    assert drops.losses(scripted_game("ps", "sf", "1/2-1/2", [-3.0]), "ps", 2.0, 1.5) is None
    assert drops.losses(scripted_game("sf", "ps", "0-1", [-3.0]), "ps", 2.0, 1.5) is None  # ps won as Black
    assert drops.losses(scripted_game("a", "b", "0-1", [-3.0]), "ps", 2.0, 1.5) is None
    # Lost as Black: the opponent is White, its evaluation is White's own.
    never = drops.losses(scripted_game("sf", "ps", "1-0", [0.2, 0.4]), "ps", 2.0, 1.5)
    assert never is not None and never.decided_at is None and never.drop is None


def test_the_report_counts_the_decided_games_and_their_largest_rises(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    games = [scripted_game("ps", "sf", "0-1", [-0.1, -0.3, -1.8, -2.5]),
             scripted_game("ps", "sf", "0-1", [-0.5, -1.0, -1.6, -2.1]),
             scripted_game("ps", "sf", "1/2-1/2", [0.0])]
    path = tmp_path / "match.pgn"
    path.write_text("\n\n".join(str(game) for game in games) + "\n\n")
    drops.main([str(path), "--engine", "ps"])
    out = capsys.readouterr().out
    assert "lost games: 2; the opponent's evaluation reached +2 in 2" in out
    assert "0.5 to 1 pawns: 1" in out and "1 to 2 pawns: 1" in out


@pytest.mark.skipif(STOCKFISH is None, reason="Stockfish is not installed (apt-get install stockfish)")
def test_a_replay_scores_each_choice_against_the_referee_s_best() -> None:
    # Black to move can take a queen for nothing; at any budget the loss is a small number of centipawns, never negative.
    fen = "4k3/8/8/3q4/8/8/3Q4/7K b - - 0 1"
    lost = drops.replay([(fen, chess.Move.from_uci("e8f8"))], STOCKFISH, STOCKFISH, [1, 2000], depth=8)
    assert set(lost) == {1, 2000}
    assert all(len(values) == 1 and 0 <= values[0] <= 1000 for values in lost.values())
    assert lost[2000][0] < 100  # with 2,000 nodes Stockfish takes the queen
