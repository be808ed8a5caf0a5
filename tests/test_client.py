"""Drive the real engine process the way GUIs and tools do.

The first part uses python-chess's `SimpleEngine` client; the second part talks
to the process over raw pipes (a reader thread feeds a queue, so every read has
a timeout) to send input no well-behaved client would.

Every wait has a generous hang guard; nothing here asserts how fast the
engine is.  Searches use depths and node counts; the few movetimes are
smoke tests whose outcome does not depend on the machine's speed (games
under movetime on a deterministic clock are in tests/test_uci_rules.py).

Past 500 lines on purpose: both clients share the engine-process fixtures,
and one file keeps "what a real client sees" together.
"""

from __future__ import annotations

import os

import chess
import chess.engine
import pytest

from tests.uci_process import guarded_engine

#: Hang guard for one raw read.
#: How many mate-in-2 puzzles of data/suites/mate2.fen are checked.
MATE2_COUNT = int(os.environ.get("PAWNSTORM_MATE2_COUNT", "12"))

KQK = "8/8/8/4k3/8/8/8/4K2Q w - - 0 1"
BLACK_MATES_IN_ONE = "8/8/8/8/8/5k2/q7/7K b - - 0 1"
#: Line 2 of data/suites/mate2.fen: 1. Rxf7+ Kxf7 2. Qg7#.
MATE_IN_TWO = "3rrk2/2p2pR1/p4n2/1p1PpP2/2p2q1P/3P1BQ1/PPP5/6RK w - - 1 1"
MIDDLEGAME = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


# --- helpers --------------------------------------------------------------------------


def mates_in_one(board: chess.Board) -> bool:
    """Whether the side to move has a move that checkmates."""
    for move in board.legal_moves:
        board.push(move)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return True
    return False


def forces_mate_in_two(board: chess.Board, move: chess.Move) -> bool:
    """Whether `move` mates at once or leaves every reply facing a mate in one."""
    board = board.copy()
    board.push(move)
    if board.is_checkmate():
        return True
    if board.is_game_over():
        return False
    for reply in list(board.legal_moves):
        board.push(reply)
        ok = mates_in_one(board)
        board.pop()
        if not ok:
            return False
    return True


def assert_legal_line(board: chess.Board, moves: list[chess.Move]) -> chess.Board:
    """Play `moves` from `board`, asserting each is legal; returns the final position."""
    board = board.copy()
    for ply, move in enumerate(moves):
        assert move in board.legal_moves, (
            f"pv move {ply + 1} ({move.uci()}) is illegal in {board.fen()}; pv {[m.uci() for m in moves]}")
        board.push(move)
    return board


# --- handshake and options ---------------------------------------------------------------


def test_handshake_id(engine):
    assert engine.id["name"].startswith("Pawnstorm")
    assert engine.id.get("author")


@pytest.mark.parametrize("name, kind, default, minimum, maximum", [
    ("Hash", "spin", 16, 1, 1024),
    ("Clear Hash", "button", None, None, None),
    ("OwnBook", "check", True, None, None),
    ("Move Overhead", "spin", 30, 0, 5000),
    ("Threads", "spin", 1, 1, 512),
])
def test_handshake_options(engine, name, kind, default, minimum, maximum):
    option = engine.options[name]
    assert option.type == kind
    assert option.default == default
    assert option.min == minimum
    assert option.max == maximum


def test_handshake_bookfile_is_a_string_option(engine):
    assert engine.options["BookFile"].type == "string"


def test_handshake_option_names_case_insensitive(engine):
    assert engine.options["hash"].name == "Hash"
    assert engine.options["OWNBOOK"].name == "OwnBook"


def test_configure_and_ping(engine):
    engine.configure({"Hash": 32, "Move Overhead": 50, "OwnBook": False})
    engine.ping()
    # The book is really off: a clock move from the start position is searched.
    result = engine.play(chess.Board(), chess.engine.Limit(white_clock=2, black_clock=2),
                         info=chess.engine.INFO_ALL)
    assert result.move in chess.Board().legal_moves
    assert "depth" in result.info, result.info
    assert "book" not in str(result.info.get("string", ""))
    # Clear Hash empties the table: hashfull drops to 0 (a depth-1 search stores a single entry).
    engine.configure({"Hash": 1})
    board = chess.Board(MIDDLEGAME)
    assert engine.analyse(board, chess.engine.Limit(depth=4))["hashfull"] > 0
    assert engine.analyse(board, chess.engine.Limit(depth=1))["hashfull"] > 0  # nothing else empties it
    engine.configure({"Clear Hash": None})
    engine.ping()
    assert engine.analyse(board, chess.engine.Limit(depth=1))["hashfull"] == 0


def test_no_legal_move_is_no_move_to_python_chess(engine):
    """Checkmated or stalemated: python-chess hears `bestmove (none)` as no move, not a null move to push."""
    for fen in ("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"):
        assert engine.play(chess.Board(fen), chess.engine.Limit(depth=2)).move is None


def test_configure_rejects_out_of_range_client_side(engine):
    with pytest.raises(chess.engine.EngineError):
        engine.configure({"Hash": 99999})
    with pytest.raises(chess.engine.EngineError):
        engine.configure({"NoSuchOption": 1})
    engine.ping()


def test_own_book_plays_a_book_move_under_a_clock(engine):
    result = engine.play(chess.Board(), chess.engine.Limit(white_clock=5, black_clock=5),
                         info=chess.engine.INFO_ALL)
    assert result.move in chess.Board().legal_moves
    assert result.info.get("string", "").startswith("book move "), result.info


def test_bookfile_default_survives_a_per_command_option(engine, repo_root):
    book = repo_root / "opening_book" / "data" / "default.bin"
    limit = chess.engine.Limit(white_clock=5, black_clock=5)
    engine.play(chess.Board(), limit, options={"BookFile": str(book)})
    # python-chess restores the engine's advertised default for the next command.
    result = engine.play(chess.Board(), limit, info=chess.engine.INFO_ALL)
    assert "not found" not in result.info.get("string", ""), result.info
    assert result.info.get("string", "").startswith("book move "), result.info


# --- play with every kind of limit ----------------------------------------------------------


@pytest.mark.parametrize("limit", [
    chess.engine.Limit(time=0.2),
    chess.engine.Limit(depth=3),
    chess.engine.Limit(nodes=2000),
    chess.engine.Limit(white_clock=5, black_clock=5, white_inc=0.1, black_inc=0.1),
    chess.engine.Limit(white_clock=5, black_clock=5, remaining_moves=10),
], ids=["movetime", "depth", "nodes", "clock", "movestogo"])
@pytest.mark.parametrize("fen", [chess.STARTING_FEN, MIDDLEGAME, KQK, BLACK_MATES_IN_ONE],
                         ids=["start", "middlegame", "kqk", "black-mates"])
def test_play_limits_give_legal_moves(engine_no_book, limit, fen):
    board = chess.Board(fen)
    result = engine_no_book.play(board, limit)
    assert result.move in board.legal_moves
    if result.ponder is not None:
        board.push(result.move)
        assert result.ponder in board.legal_moves


def test_play_after_move_history(engine_no_book):
    board = chess.Board()
    for san in ("e4", "e5", "Nf3", "Nc6", "Bb5"):
        board.push_san(san)
    result = engine_no_book.play(board, chess.engine.Limit(depth=3))
    assert result.move in board.legal_moves


def test_play_mate_limit_finds_a_mating_move(engine_no_book):
    board = chess.Board(MATE_IN_TWO)
    result = engine_no_book.play(board, chess.engine.Limit(mate=2), info=chess.engine.INFO_ALL)
    assert result.move in board.legal_moves
    assert forces_mate_in_two(board, result.move), f"{result.move.uci()} does not force mate in 2"
    assert result.info["score"].relative == chess.engine.Mate(2)


def test_play_depth_is_deterministic_from_a_new_game(engine_no_book):
    for fen in (chess.STARTING_FEN, MIDDLEGAME):
        board = chess.Board(fen)
        # A fresh game each time (ucinewgame): same tables, same tree, same answer.
        first = engine_no_book.play(board, chess.engine.Limit(depth=3), game=object(), info=chess.engine.INFO_ALL)
        second = engine_no_book.play(board, chess.engine.Limit(depth=3), game=object(), info=chess.engine.INFO_ALL)
        assert first.move == second.move
        assert first.info["nodes"] == second.info["nodes"]
        assert first.info["pv"] == second.info["pv"]


def test_play_depth_twice_gives_a_legal_move_both_times(engine_no_book):
    # Without ucinewgame the second search reuses the tables and may pick a
    # different move of equal score, so only legality is required here.
    board = chess.Board(MIDDLEGAME)
    for _ in range(2):
        assert engine_no_book.play(board, chess.engine.Limit(depth=3)).move in board.legal_moves


# --- analyse / analysis -------------------------------------------------------------------------


@pytest.mark.parametrize("fen", [chess.STARTING_FEN, MIDDLEGAME, KQK], ids=["start", "middlegame", "kqk"])
def test_analyse_depth_info(engine, fen):
    board = chess.Board(fen)
    info = engine.analyse(board, chess.engine.Limit(depth=4))
    assert info["depth"] == 4
    assert info["seldepth"] >= info["depth"]
    assert isinstance(info["score"], chess.engine.PovScore)
    assert info["score"].turn == board.turn
    assert info["nodes"] > 0
    # nps is nodes per second of the reported time (ms, rounded down: nps lies between the two rates).
    time_ms = round(info["time"] * 1000)
    assert time_ms > 0, "a depth-4 search takes more than a millisecond in Python"
    assert info["nodes"] * 1000 // (time_ms + 1) <= info["nps"] <= info["nodes"] * 1000 // time_ms
    assert 0 <= info["hashfull"] <= 1000
    assert info["pv"], info
    assert_legal_line(board, info["pv"])


def test_analyse_nodes_and_time(engine_no_book):
    board = chess.Board(MIDDLEGAME)
    info = engine_no_book.analyse(board, chess.engine.Limit(nodes=3000))
    assert info["nodes"] > 0 and info["pv"]
    assert_legal_line(board, info["pv"])
    # (With OwnBook on, a movetime request in a book position is answered from
    # the book, without any info line; only depth/nodes/mate/infinite always search.)
    # A real-time smoke test: half a second is ample for depth 1 on any machine.
    info = engine_no_book.analyse(board, chess.engine.Limit(time=0.5))
    assert info["pv"]
    assert_legal_line(board, info["pv"])


def test_analyse_mate_score_sign_from_losing_side(engine):
    # Black's only move Kb8 is met by Qh8#: Mate(-1) from Black's view.
    board = chess.Board("k7/8/1K6/8/8/7Q/8/8 b - - 0 1")
    info = engine.analyse(board, chess.engine.Limit(depth=4))
    assert info["score"].relative == chess.engine.Mate(-1)
    assert info["score"].white() == chess.engine.Mate(+1)


def test_infinite_analysis_then_stop(engine):
    board = chess.Board(MIDDLEGAME)
    depths = []
    with engine.analysis(board) as analysis:
        for info in analysis:
            if "depth" in info:
                depths.append(info["depth"])
                assert_legal_line(board, info.get("pv", []))
            if len(depths) >= 3:
                break
        analysis.stop()
        best = analysis.wait()
    assert depths[:3] == [1, 2, 3]
    assert isinstance(best, chess.engine.BestMove)
    assert best.move in board.legal_moves
    # The engine is still usable afterwards.
    assert engine.play(board, chess.engine.Limit(depth=2)).move in board.legal_moves


def test_infinite_analysis_of_a_mate_ends_on_stop_with_the_mate(engine):
    # Through python-chess's analysis: the mate is found, and `stop` gives it
    # as the bestmove.  (That bestmove waits for `stop` is checked on the raw
    # pipe, test_raw_infinite_search_of_a_mate_waits_for_stop: python-chess
    # takes an early bestmove without complaint.)
    board = chess.Board(BLACK_MATES_IN_ONE)
    with engine.analysis(board) as analysis:
        for info in analysis:
            if info.get("score") is not None and info["score"].relative == chess.engine.Mate(1):
                break
        engine.ping()
        analysis.stop()
        best = analysis.wait()
    after = board.copy()
    after.push(best.move)
    assert after.is_checkmate()


# --- mate-in-2 suite ------------------------------------------------------------------------------


@pytest.fixture
def puzzle_engine(engine_cmd, repo_root, engine_env):
    # Function scope: the hang guard then times this suite alone, not the rest of the module too.
    with guarded_engine(engine_cmd, repo_root, engine_env, guard=120.0) as eng:
        eng.configure({"OwnBook": False})
        yield eng


def test_mate_in_two_suite(repo_root, puzzle_engine):
    path = repo_root / "data" / "suites" / "mate2.fen"
    fens = [line.strip() for line in path.read_text().splitlines() if line.strip()][:MATE2_COUNT]
    assert fens, f"{path} is empty"
    failures = []
    for index, fen in enumerate(fens, 1):
        board = chess.Board(fen)
        info = puzzle_engine.analyse(board, chess.engine.Limit(depth=5), game=index)
        pv = info.get("pv", [])
        problems = []
        if info["score"].relative.mate() != 2:
            problems.append(f"score {info['score'].relative}")
        if not pv or pv[0] not in board.legal_moves:
            problems.append(f"first pv move {pv[:1]} illegal")
        else:
            if not forces_mate_in_two(board, pv[0]):
                problems.append(f"{pv[0].uci()} does not force mate in 2")
            if len(pv) >= 3:
                final = assert_legal_line(board, pv[:3])
                if not final.is_checkmate():
                    problems.append(f"pv {[m.uci() for m in pv[:3]]} does not end in checkmate")
        if problems:
            failures.append(f"#{index} {fen}: {'; '.join(problems)}")
    assert not failures, "\n".join(failures)


# --- whole games ----------------------------------------------------------------------------------


def play_out(engine: chess.engine.SimpleEngine, board: chess.Board, limit: chess.engine.Limit,
             max_plies: int = 300) -> chess.Board:
    """Let the engine play both sides until the game is over (or max_plies)."""
    board = board.copy()
    game = object()
    for _ in range(max_plies):
        if board.is_game_over():
            break
        result = engine.play(board, limit, game=game)
        assert result.move in board.legal_moves, f"illegal {result.move} in {board.fen()}"
        board.push(result.move)
    return board


def test_black_mates_at_once(engine_no_book):
    # A real-time smoke test: 10 s of movetime, but a proven mate is played at once
    # (depth 4), so the game takes a fraction of a second.  (Games under movetime on a
    # deterministic clock: tests/test_uci_rules.py.)
    board = play_out(engine_no_book, chess.Board(BLACK_MATES_IN_ONE), chess.engine.Limit(time=10))
    assert board.is_checkmate() and board.outcome().winner == chess.BLACK
    assert len(board.move_stack) == 1


def test_kqk_game_is_won_at_fixed_depth(engine_no_book):
    board = play_out(engine_no_book, chess.Board(KQK), chess.engine.Limit(depth=3))
    assert board.is_checkmate(), f"no mate, ended {board.outcome()} in {board.fen()}"
    assert board.outcome().winner == chess.WHITE


def test_opening_with_book_under_a_clock(engine):
    board = chess.Board()
    clock = {chess.WHITE: 10.0, chess.BLACK: 10.0}
    book_moves = 0
    for _ in range(8):
        limit = chess.engine.Limit(white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK],
                                   white_inc=0.1, black_inc=0.1)
        result = engine.play(board, limit, info=chess.engine.INFO_ALL)
        assert result.move in board.legal_moves
        if str(result.info.get("string", "")).startswith("book move"):
            book_moves += 1
        board.push(result.move)
    assert book_moves >= 1


# --- raw pipes: input no client library would send ----------------------------------------------------


def info_strings(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("info string ")]


def test_raw_uci_handshake(raw):
    raw.send("uci")
    _, header = raw.expect("uciok")
    assert header[0].startswith("id name Pawnstorm")
    assert "option name BookFile type string default <bundled>" in header
    assert raw.sync() == []


def test_raw_unknown_command_ignored(raw):
    raw.send("foo bar")
    assert raw.sync() == []
    raw.send("go depth 1")
    raw.bestmove(chess.Board())


def test_raw_bad_fen_reported_and_position_kept(raw):
    raw.send("position startpos moves e2e4")
    raw.send("position fen garbage")
    messages = info_strings(raw.sync())
    assert len(messages) == 1 and "FEN" in messages[0] and "garbage" in messages[0], messages
    raw.send("go depth 2")
    board = chess.Board()
    board.push_uci("e2e4")
    raw.bestmove(board)


def test_raw_illegal_move_in_list(raw):
    raw.send("position startpos moves e2e4 e7e5 zzzz")
    messages = info_strings(raw.sync())
    assert len(messages) == 1 and "zzzz" in messages[0], messages
    raw.send("go depth 2")
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    raw.bestmove(board)


def test_raw_setoption_out_of_range(raw):
    raw.send("setoption name Hash value 99999")
    messages = info_strings(raw.sync())
    assert len(messages) == 1 and "range" in messages[0], messages


def test_raw_go_before_position_searches_start(raw):
    raw.send("go depth 2")
    raw.bestmove(chess.Board())


@pytest.mark.parametrize("command, answer", [("isready", "readyok"), ("go infinite", "info depth")])
def test_raw_eof_exits_cleanly(raw, command, answer):
    """End of input, idle or in the middle of an infinite search: exit 0, silent stderr."""
    raw.send(command)
    raw.expect(answer)
    raw.proc.stdin.close()
    assert raw.wait_exit() == 0
    assert raw.stderr() == ""


def test_raw_quit_during_infinite_search(raw):
    raw.send("position startpos moves e2e4")
    raw.send("go infinite")
    raw.expect("info depth")
    raw.send("quit")
    assert raw.wait_exit() == 0
    assert raw.stderr() == ""


def test_raw_isready_during_infinite_search(raw):
    raw.send("go infinite")
    raw.expect("info depth")
    before = raw.sync()
    assert not any(line.startswith("bestmove") for line in before)
    raw.send("stop")
    raw.bestmove(chess.Board())


def test_raw_infinite_search_of_a_mate_waits_for_stop(raw):
    fen = BLACK_MATES_IN_ONE
    raw.send(f"position fen {fen}")
    raw.send("go infinite")
    raw.expect("info depth")
    for _ in range(3):  # however long it has been searching, no bestmove before stop
        assert not any(line.startswith("bestmove") for line in raw.sync())
    raw.send("stop")
    board = chess.Board(fen)
    move, _ = raw.bestmove(board)
    board.push(move)
    assert board.is_checkmate()


def test_raw_stop_gives_exactly_one_bestmove(raw):
    raw.send("position startpos moves d2d4")
    raw.send("go infinite")
    raw.expect("info depth")
    raw.send("stop")
    board = chess.Board()
    board.push_uci("d2d4")
    raw.bestmove(board)
    raw.send("stop")  # nothing left to stop
    after = raw.sync() + raw.sync()
    assert not any(line.startswith("bestmove") for line in after), after
    # And the next search still works.
    raw.send("go depth 1")
    raw.bestmove(board)
    assert not any(line.startswith("bestmove") for line in raw.sync())


def test_raw_ponderhit_leads_to_a_bestmove(raw):
    raw.send("setoption name OwnBook value false")
    raw.send("position startpos moves e2e4 e7e5")
    raw.send("go ponder wtime 1000 btime 1000")
    raw.expect("info depth")
    raw.send("ponderhit")
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    # Under a 1 s clock the move is due after well under a second; the read guard catches a hang.
    line, _ = raw.expect("bestmove")
    assert chess.Move.from_uci(line.split()[1]) in board.legal_moves


def test_raw_ponder_miss_is_stopped(raw):
    # The GUI's way out of a ponder miss: stop, ignore that bestmove, search anew.
    raw.send("setoption name OwnBook value false")
    raw.send("position startpos moves e2e4 e7e5")
    raw.send("go ponder wtime 1000 btime 1000")
    raw.expect("info depth")
    raw.send("stop")
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    raw.bestmove(board)
    raw.send("position startpos moves e2e4 c7c5")
    raw.send("go wtime 1000 btime 1000")
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("c7c5")
    raw.bestmove(board)


def test_raw_quit_when_idle(raw):
    raw.send("quit")
    assert raw.wait_exit() == 0
    assert raw.stderr() == ""
