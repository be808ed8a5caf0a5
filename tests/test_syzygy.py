"""Syzygy tablebases on real files: endings won, drawn and lost, played through UCI.

The tables are the ones that come with the tests (tests/data/syzygy: every
3- and 4-piece table and KRBvKR).  The engine runs as a subprocess behind
python-chess's `SimpleEngine` with `SyzygyPath` set, exactly as a GUI would
drive it; python-chess's own prober, opened on the same folder, is the
referee and plays the other side with the tables' best moves.  The referee
reads results off the prober's DTZ and the board's halfmove clock alone (the
distance falls, the fifty-move count is respected), not with the engine's
own root arithmetic.  Searches are fixed-depth, so the games are
reproducible and each takes a few seconds.
"""
from __future__ import annotations

from pathlib import Path

import chess
import chess.engine
import chess.syzygy
import pytest

from tests.uci_process import guarded_engine

SYZYGY_DIR = Path(__file__).resolve().parent / "data" / "syzygy"
#: Each engine move in the games: the root ranking by DTZ does the work.
MOVE = chess.engine.Limit(depth=2)
#: Plies of the fifty-move rule.
FIFTY_MOVES = 100

#: Hard starts: the defending king in the centre, the attacker's pieces in a corner.
KQK = "8/8/8/4k3/8/8/8/K6Q w - - 0 1"
KRK = "R7/8/8/4k3/8/8/8/7K w - - 0 1"
KBNK = "8/8/8/3k4/8/8/8/KBN5 w - - 0 1"  # DTZ 58: mate in the corner of the bishop's colour
KPK_ONLY_KD3 = "8/8/8/3k4/8/8/2KP4/8 w - - 0 1"  # only Kd3 wins
KRBKR_WON = "8/8/1B6/8/k7/1RK5/7r/8 w - - 0 1"  # DTZ 89: the rook falls just inside the rule
#: Draws with a single saving move for the side to move.
KRBKR_DRAWN = "7k/8/2B3K1/8/4R3/8/8/1r6 b - - 0 1"
KPK_DRAWN = "K7/8/8/3P4/5k2/8/8/8 b - - 0 1"
KRKR_DRAWN = "8/8/7r/8/3R4/1k6/8/K7 w - - 0 1"

WIN, DRAW, LOSS = 1, 0, -1


@pytest.fixture(scope="module")
def syzygy_dir() -> Path:
    return SYZYGY_DIR


@pytest.fixture(scope="module")
def referee(syzygy_dir):
    """python-chess's prober on the same files: judges the engine and plays the other side."""
    with chess.syzygy.open_tablebase(str(syzygy_dir)) as tables:
        yield tables


@pytest.fixture(scope="module")
def tb_engine(engine_cmd, repo_root, engine_env, syzygy_dir):
    with guarded_engine(engine_cmd, repo_root, engine_env, guard=300.0) as engine:
        engine.configure({"OwnBook": False, "SyzygyPath": str(syzygy_dir)})
        yield engine


def verdict(referee, board: chess.Board) -> tuple[int, int]:
    """The side to move's result under the fifty-move rule, and the plies to its next zeroing move.

    Straight from python-chess's prober: its DTZ is 1..100 for a win and
    -100..-1 for a loss (plies to the next capture, pawn move or mate, with
    the halfmove clock at zero), beyond that a win or loss the fifty-move
    rule turns into a draw.  The plies the clock has already counted come
    off the budget: a result stands only if the zeroing move comes by ply
    100 of the count.  A mate, a dead position or a third repetition ends
    the game first.
    """
    if board.is_checkmate():
        return LOSS, 0
    if board.is_game_over() or board.is_repetition(3):
        return DRAW, 0
    dtz = referee.probe_dtz(board)
    if dtz == 0 or abs(dtz) + board.halfmove_clock > FIFTY_MOVES:
        return DRAW, 0
    return (WIN if dtz > 0 else LOSS), abs(dtz)


def after(board: chess.Board, move: chess.Move) -> chess.Board:
    child = board.copy()  # with its moves: repetitions count
    child.push(move)
    return child


def outcome(referee, board: chess.Board, move: chess.Move) -> tuple[int, int]:
    """The mover's result if `move` is played, and the plies from `board` to the next zeroing move.

    A capture, a pawn move or a mate is the zeroing move itself (1 ply);
    otherwise it comes on best play one ply later than the opponent's own.
    A draw has no distance (0).
    """
    child = after(board, move)
    result, plies = verdict(referee, child)
    if result == DRAW:
        return DRAW, 0
    return -result, 1 if board.is_zeroing(move) or child.is_checkmate() else 1 + plies


def preference(referee, board: chess.Board, move: chess.Move) -> tuple[int, int]:
    """Perfect play by DTZ: the quickest zeroing win, else a draw, else the longest resistance."""
    result, plies = outcome(referee, board, move)
    return (result, -plies if result == WIN else plies if result == LOSS else 0)


def tables_move(referee, board: chess.Board) -> chess.Move:
    """The tables' best move: quickest progress when winning, longest resistance when losing."""
    return max(board.legal_moves, key=lambda move: preference(referee, board, move))


def trickiest_draw(referee, board: chess.Board) -> chess.Move:
    """A move that keeps the draw and leaves the opponent the fewest replies that keep it."""
    def saving_replies(move: chess.Move) -> int:
        position = after(board, move)
        return sum(outcome(referee, position, reply)[0] != LOSS for reply in position.legal_moves)

    drawing = [move for move in board.legal_moves if outcome(referee, board, move)[0] == DRAW]
    return min(drawing, key=saving_replies)


def engine_move(engine, board: chess.Board, game: object) -> chess.Move:
    move = engine.play(board, MOVE, game=game).move
    assert move in board.legal_moves, f"{move} is illegal in {board.fen()}"
    return move


# --- won endings converted inside the fifty-move rule -----------------------------------------


@pytest.mark.parametrize("defender", ["tables", "engine"])
@pytest.mark.parametrize("fen", [KQK, KRK, KBNK, KPK_ONLY_KD3, KRBKR_WON],
                         ids=["KQvK", "KRvK", "KBNvK", "KPvK", "KRBvKR"])
def test_won_ending_is_converted(tb_engine, referee, fen, defender) -> None:
    board = chess.Board(fen)
    attacker = board.turn
    game = object()
    last = None  # the attacker's distance to zeroing at its previous move, if nothing zeroed since
    while not board.is_game_over() and len(board.move_stack) < 200:
        if board.turn == attacker:
            result, distance = verdict(referee, board)
            assert result == WIN, f"the win is gone at {board.fen()}"
            assert last is None or distance < last, f"DTZ {last} -> {distance}: no progress at {board.fen()}"
            move = engine_move(tb_engine, board, game)
            assert outcome(referee, board, move)[0] == WIN, f"{move} spoils the win in {board.fen()}"
            last = None if board.is_zeroing(move) else distance
        else:
            move = engine_move(tb_engine, board, game) if defender == "engine" else tables_move(referee, board)
            if board.is_zeroing(move):
                last = None
        board.push(move)
    assert board.is_checkmate() and board.outcome().winner == attacker, board.fen()


def test_kbnk_follows_dtz_down(tb_engine, referee) -> None:
    """The issue's game: every White move brings the capture-or-mate nearer, none wanders."""
    board = chess.Board(KBNK)
    before = referee.probe_dtz(board)
    game = object()
    while not board.is_game_over():
        board.push(engine_move(tb_engine, board, game))  # White
        if board.is_game_over():
            break
        board.push(engine_move(tb_engine, board, game))  # Black
        after = referee.probe_dtz(board)
        assert 0 < after < before, f"DTZ {before} -> {after}: no progress at {board.fen()}"
        before = after
    assert board.is_checkmate() and len(board.move_stack) <= 59


# --- draws held -----------------------------------------------------------------------------------


@pytest.mark.parametrize("fen", [KRBKR_DRAWN, KPK_DRAWN, KRKR_DRAWN], ids=["KRBvKR", "KPvK", "KRvKR"])
def test_draw_is_held_against_the_trickiest_play(tb_engine, referee, fen) -> None:
    board = chess.Board(fen)
    defender = board.turn
    game = object()
    while not board.is_game_over(claim_draw=True) and len(board.move_stack) < 40:
        if board.turn == defender:
            move = engine_move(tb_engine, board, game)
            assert outcome(referee, board, move)[0] == DRAW, f"{move} loses the draw in {board.fen()}"
        else:
            move = trickiest_draw(referee, board)
        board.push(move)


@pytest.mark.parametrize("fen", [KRKR_DRAWN, KRBKR_DRAWN], ids=["KRvKR", "KRBvKR"])
def test_draw_is_held_playing_both_sides(tb_engine, referee, fen) -> None:
    board = chess.Board(fen)
    game = object()
    while not board.is_game_over(claim_draw=True) and len(board.move_stack) < 30:
        move = engine_move(tb_engine, board, game)
        assert outcome(referee, board, move)[0] == DRAW, f"{move} changes the result in {board.fen()}"
        board.push(move)


# --- losing: the longest resistance ---------------------------------------------------------------


@pytest.mark.parametrize("fen", [
    "8/8/8/4k3/8/8/8/K6Q b - - 0 1",  # KQvK
    "8/8/8/3k4/8/8/8/KBN5 b - - 0 1",  # KBNvK
    "1k6/8/8/R1KB4/8/3r4/8/8 b - - 0 1",  # KRBvKR: one move holds out 90 plies, the rest 24 or fewer
    "8/8/8/8/8/2k5/1R6/K7 b - - 0 1",  # KRvK
])
def test_losing_side_resists_longest(tb_engine, referee, fen) -> None:
    board = chess.Board(fen)
    outcomes = {move: outcome(referee, board, move) for move in board.legal_moves}
    assert {result for result, _ in outcomes.values()} == {LOSS}, "the position should be lost"
    longest = max(plies for _, plies in outcomes.values())
    move = engine_move(tb_engine, board, object())
    assert outcomes[move][1] == longest, f"{move} resists {outcomes[move][1]} plies, {longest} possible"


def test_defence_against_the_tables_is_longest_every_move(tb_engine, referee) -> None:
    board = chess.Board(KRBKR_WON)
    game = object()
    for _ in range(12):
        board.push(tables_move(referee, board))
        outcomes = {move: outcome(referee, board, move) for move in board.legal_moves}
        assert {result for result, _ in outcomes.values()} == {LOSS}, board.fen()
        move = engine_move(tb_engine, board, game)
        assert outcomes[move][1] == max(plies for _, plies in outcomes.values()), board.fen()
        board.push(move)


# --- the fifty-move rule: cursed wins and blessed losses are draws --------------------------------


@pytest.mark.parametrize("clock, won", [(0, True), (42, True), (43, False), (70, False)])
def test_a_win_beyond_the_halfmove_budget_scores_as_a_draw(tb_engine, referee, clock, won) -> None:
    # KBNvK: the fastest mate takes 58 plies; with `clock` plies already
    # gone it must come by ply 100 of the count, or the rule draws.
    board = chess.Board(KBNK.replace(" 0 1", f" {clock} 1"))
    assert referee.probe_dtz(board) == 58
    info = tb_engine.analyse(board, chess.engine.Limit(depth=2), game=object())
    score = info["score"].relative
    if won:
        assert score > chess.engine.Cp(20000), score
    else:
        assert chess.engine.Cp(0) <= score < chess.engine.Cp(50), f"cursed win scored {score}"
    # Black's view of the same position one ply later: a blessed loss.
    board.push(engine_move(tb_engine, board, object()))
    score = tb_engine.analyse(board, chess.engine.Limit(depth=2), game=object())["score"].relative
    if won:
        assert score < chess.engine.Cp(-20000), score
    else:
        assert chess.engine.Cp(-50) < score <= chess.engine.Cp(0), f"blessed loss scored {score}"


# --- what the GUI sees -------------------------------------------------------------------------------


def test_root_moves_are_filtered_and_reported(tb_engine, referee) -> None:
    board = chess.Board("8/8/8/8/8/2k5/1R6/K7 w - - 0 1")  # the rook is attacked
    outcomes = {move: outcome(referee, board, move) for move in board.legal_moves}
    assert (DRAW, 0) in outcomes.values(), "some moves drop the rook"
    quickest = min(plies for result, plies in outcomes.values() if result == WIN)
    lines = tb_engine.analyse(board, chess.engine.Limit(depth=3), multipv=len(outcomes), game=object())
    assert {line["pv"][0] for line in lines} == {move for move, best in outcomes.items() if best == (WIN, quickest)}
    for line in lines:
        assert line["score"].relative > chess.engine.Cp(20000), line["score"]  # a tablebase win (or a mate)
        assert line["tbhits"] > 0


def test_tablebase_score_carries_the_distance(tb_engine) -> None:
    far = tb_engine.analyse(chess.Board(KBNK), chess.engine.Limit(depth=1), game=object())
    near = tb_engine.analyse(chess.Board("8/8/8/8/8/2k5/1R6/K7 w - - 0 1"), chess.engine.Limit(depth=1),
                             game=object())
    assert chess.engine.Cp(20000) < far["score"].relative < near["score"].relative
    assert far["tbhits"] > 0 and near["tbhits"] > 0
