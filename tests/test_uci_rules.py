"""The engine's rules around a search, in process: pondering, the book, options mid-search, errors.

Driven through `UciEngine.handle` like tests/test_uci_protocol.py.  Nothing
here depends on the machine's speed: where a clock matters the search runs on
the node clock of tests/fake_clock.py, and "the search has ended" is observed
(the search thread waiting for `ponderhit` / `stop`), never guessed from a
sleep.
"""
from __future__ import annotations

import io
import threading
from pathlib import Path

import chess
import chess.polyglot
import pytest

import search.driver
from tests.fake_clock import install_node_clock
from tests.test_book import entry, write_book
from tests.test_uci_protocol import GUARD, Harness, assert_legal_bestmove, bestmove_of, uci  # noqa: F401 (fixture)

KQK = "8/8/8/4k3/8/8/8/4K2Q w - - 0 1"
CASTLING = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
#: With a 1 cp aspiration window the root fails both ways here by depth 6.
ITALIAN_BLACK = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"


class WaitSpy(threading.Event):
    """The engine's release event, telling the test when the search thread starts waiting on it."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        self.waiting.set()
        return super().wait(timeout)


def infos(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("info depth") and " currmove " not in line]


def field(line: str, name: str) -> int:
    words = line.split()
    return int(words[words.index(name) + 1])


def finished_search_waits(uci: Harness) -> WaitSpy:
    """Install the spy; the caller then sends `go`, and `spy.waiting` says the search has ended."""
    spy = WaitSpy()
    uci.engine._release = spy  # `go` clears it, `ponderhit` / `stop` set it, the search thread waits on it
    return spy


# --- pondering ------------------------------------------------------------------------------


@pytest.mark.parametrize("release", ["ponderhit", "stop"])
def test_ponder_bestmove_waits_even_when_the_search_has_ended(uci, release) -> None:
    uci.send("setoption name OwnBook value false")
    uci.send("position startpos moves e2e4")
    spy = finished_search_waits(uci)
    uci.send("go ponder wtime 60000 btime 60000 depth 2")  # ends by itself after depth 2
    assert spy.waiting.wait(GUARD), "the search never finished"
    assert uci.engine._search_thread.is_alive()
    lines = uci.lines()
    assert infos(lines) and not uci.bestmoves(), lines
    uci.send(release)
    (line,) = uci.wait_for_bestmoves()
    board = chess.Board()
    board.push_uci("e2e4")
    assert_legal_bestmove(line, board)


def test_ponderhit_does_not_end_an_infinite_search(uci) -> None:
    """`go infinite` waits for `stop` alone, even once its search has ended (here: a mate in one, found at once)."""
    uci.send("setoption name OwnBook value false")
    uci.send("position fen 6k1/5ppp/8/8/8/8/8/R6K w - - 0 1")
    spy = finished_search_waits(uci)
    uci.send("go infinite depth 3")
    assert spy.waiting.wait(GUARD), "the search never finished"
    uci.send("ponderhit")
    assert not spy.is_set() and not uci.bestmoves()
    uci.send("stop")
    (line,) = uci.wait_for_bestmoves()
    assert line.split()[1] == "a1a8"


@pytest.mark.parametrize("release", ["ponderhit", "stop"])
def test_no_book_move_while_pondering(uci, release) -> None:
    uci.send("position startpos")  # in the book
    uci.send("go ponder wtime 10000 btime 10000")
    uci.wait_for_line("info depth 2")
    uci.send(release)
    (line,) = uci.wait_for_bestmoves()
    assert_legal_bestmove(line, chess.Board())
    assert not any("book move" in text for text in uci.info_strings()), uci.lines()


def test_the_clock_starts_at_ponderhit(uci, monkeypatch) -> None:
    """A 100 ms clock (hard limit 8.4 ms, 840 nodes here) does not end a ponder search; a ponderhit does."""
    install_node_clock(monkeypatch, 0.01)
    uci.send("setoption name OwnBook value false")
    uci.send("position startpos moves e2e4")
    uci.send("go ponder wtime 100 btime 100")
    deep = uci.wait_for_line("info depth 7")
    assert field(deep, "nodes") > 5 * 840 and field(deep, "time") > 5 * 8.4  # five times the hard limit
    assert not uci.bestmoves()
    uci.send("ponderhit")  # pondered far past the budget: the move is due at once
    (line,) = uci.wait_for_bestmoves()
    board = chess.Board()
    board.push_uci("e2e4")
    move, ponder = bestmove_of(line)
    assert_legal_bestmove(line, board)
    assert ponder is not None, "a search of depth 5 and more has a reply to ponder on"


@pytest.mark.parametrize("go", ["go depth 3", "go ponder depth 3"])
def test_bestmove_names_a_legal_reply_to_ponder_on(uci, go) -> None:
    uci.send("setoption name OwnBook value false")
    uci.send("position startpos moves d2d4")
    uci.send(go)
    if "ponder" in go:
        uci.wait_for_line("info depth 3")
        uci.send("ponderhit")
    (line,) = uci.wait_for_bestmoves()
    board = chess.Board()
    board.push_uci("d2d4")
    move, ponder = bestmove_of(line)
    assert ponder is not None, line
    assert_legal_bestmove(line, board)
    # It is the reply the search expects: the second move of the last reported line.
    last = infos(uci.lines())[-1]
    assert last.split(" pv ")[1].split()[:2] == [move, ponder]


# --- when the book is used -------------------------------------------------------------------


def book_move_played(uci: Harness, go: str, stop: bool = False) -> bool:
    """Send `go` from the start position; whether the answer came from the book."""
    uci.new_lines()
    answered = len(uci.bestmoves())
    uci.send("position startpos")
    uci.send(go)
    if stop:
        uci.wait_for_line("info depth 1")
        uci.send("stop")
    answers = uci.wait_for_bestmoves(answered + 1)
    assert_legal_bestmove(answers[-1], chess.Board())
    return any(line.startswith("info string book move") for line in uci.new_lines())


def test_the_book_is_used_under_a_clock_or_movetime(uci) -> None:
    assert book_move_played(uci, "go wtime 60000 btime 60000")
    assert book_move_played(uci, "go movetime 60000")


@pytest.mark.parametrize("option", [
    "MultiPV value 2",
    "UCI_AnalyseMode value true",
    "UCI_Chess960 value true",
    "OwnBook value false",
])
def test_options_that_turn_the_book_off(uci, option) -> None:
    assert book_move_played(uci, "go movetime 60000")  # the book is there
    uci.send(f"setoption name {option}")
    assert not book_move_played(uci, "go movetime 100")


@pytest.mark.parametrize("go, stop", [
    ("go wtime 60000 btime 60000 depth 2", False),
    ("go wtime 60000 btime 60000 nodes 500", False),
    ("go wtime 60000 btime 60000 mate 1 movetime 100", False),
    ("go infinite", True),
    ("go ponder wtime 60000 btime 60000", True),
    ("go wtime 60000 btime 60000 searchmoves d2d4", False),
    ("go", True),  # no limit at all: analysis, as in Stockfish, which has no book
    ("go winc 1000 binc 1000 movestogo 30", True),  # increments without a clock are no clock
])
def test_limits_that_always_search(uci, go, stop) -> None:
    assert book_move_played(uci, "go wtime 60000 btime 60000")
    assert not book_move_played(uci, go, stop)


@pytest.mark.parametrize("go", ["go depth abc", "go movetime soon", "go wtime"])
def test_a_malformed_go_is_named_and_searched_without_the_book(uci, go) -> None:
    """The bad number is dropped, with one message; what is left has no clock, so it searches."""
    assert not book_move_played(uci, go, stop=True)
    (message,) = uci.info_strings()
    assert message.startswith("info string go: ") and "needs a number" in message, message


def test_a_clock_beside_a_malformed_limit_still_plays_from_the_book(uci) -> None:
    assert book_move_played(uci, "go wtime 60000 btime 60000 depth abc")
    assert any("depth needs a number" in line for line in uci.info_strings())


def test_book_file_change_reopens_the_book(uci, tmp_path: Path) -> None:
    only_e4 = write_book(tmp_path / "e4.bin", [entry("", "e2e4", 1)])
    only_d4 = write_book(tmp_path / "d4.bin", [entry("", "d2d4", 1)])
    for book, move in ((only_e4, "e2e4"), (only_d4, "d2d4"), (only_e4, "e2e4")):
        uci.send(f"setoption name BookFile value {book}")
        assert book_move_played(uci, "go movetime 60000")
        assert uci.bestmoves()[-1] == f"bestmove {move}"
        assert uci.engine._book is not None and uci.engine._book.path == book


def test_a_book_path_reads_a_leading_tilde_as_home(uci, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    write_book(tmp_path / "e4.bin", [entry("", "e2e4", 1)])
    uci.send("setoption name BookFile value ~/e4.bin")
    assert book_move_played(uci, "go movetime 60000")
    assert uci.bestmoves()[-1] == "bestmove e2e4"
    assert uci.engine._book is not None and uci.engine._book.path == tmp_path / "e4.bin"


def test_a_path_keeps_its_whitespace(uci, tmp_path: Path) -> None:
    """`my  book.bin` (two spaces) is that file, not `my book.bin`: the value is taken as written."""
    two_spaces = write_book(tmp_path / "my  book.bin", [entry("", "d2d4", 1)])
    write_book(tmp_path / "my book.bin", [entry("", "e2e4", 1)])
    uci.send(f"setoption name BookFile value {two_spaces}  ")  # trailing blanks are no part of it
    assert book_move_played(uci, "go movetime 60000")
    assert uci.bestmoves()[-1] == "bestmove d2d4"
    assert uci.engine._book is not None and uci.engine._book.path == two_spaces
    tab = write_book(tmp_path / "my\tbook.bin", [entry("", "c2c4", 1)])
    uci.send(f"setoption name BookFile value {tab}")
    assert book_move_played(uci, "go movetime 60000")
    assert uci.bestmoves()[-1] == "bestmove c2c4"


# --- options that change the search's tables, sent during a search -------------------------------


def test_setoption_hash_during_a_search_stops_it_first(uci) -> None:
    uci.send("position startpos moves e2e4")
    uci.send("go infinite")
    uci.wait_for_line("info depth 2")
    uci.send("setoption name Hash value 1")
    # Returned only once the search had answered: its one bestmove is already out.
    (line,) = uci.bestmoves()
    board = chess.Board()
    board.push_uci("e2e4")
    assert_legal_bestmove(line, board)
    assert uci.engine._search_thread is None  # joined
    table = uci.engine.searcher.tt
    assert table.mask + 1 == 8192 and table.used == 0  # 1 MB, empty
    uci.send("go depth 2")
    assert len(uci.wait_for_bestmoves(2)) == 2
    assert table.hashfull() > 0  # the new table is the one searched with


def test_chess960_switched_during_a_search(uci) -> None:
    """The running search answers in the notation it started with; the next one uses the new one."""
    uci.send("setoption name OwnBook value false")
    uci.send(f"position fen {CASTLING}")
    uci.send("go infinite searchmoves e1g1")
    uci.wait_for_line("info depth 2")
    uci.send("setoption name UCI_Chess960 value true")
    (line,) = uci.bestmoves()
    assert bestmove_of(line)[0] == "e1g1"
    # Hash moves are squares: castling means another move in the other notation, so the table is emptied.
    table = uci.engine.searcher.tt
    assert uci.engine.board.chess960 and table.used == 0
    assert table.probe_data(chess.polyglot.zobrist_hash(chess.Board(CASTLING))) == 0
    uci.send("go depth 2 searchmoves e1h1")
    assert bestmove_of(uci.wait_for_bestmoves(2)[-1])[0] == "e1h1"


# --- a command that raises ------------------------------------------------------------------------


def test_a_failing_command_is_reported_and_the_engine_serves_on(uci) -> None:
    def broken(_: list[str]) -> None:
        raise RuntimeError("boom")

    uci.engine.handlers["d"] = broken
    uci.engine.run(io.StringIO("d\nisready\nposition startpos moves e2e4\ngo depth 1\nisready\nquit\n"))
    uci.engine.wait_for_search()
    lines = uci.lines()
    assert lines[0] == "info string error in 'd': RuntimeError: boom"
    assert lines[1] == "readyok"
    board = chess.Board()
    board.push_uci("e2e4")
    assert_legal_bestmove(uci.bestmoves()[0], board)


def test_a_failing_option_callback_is_reported(uci, monkeypatch) -> None:
    def broken(_: int) -> None:
        raise MemoryError("no room")

    monkeypatch.setattr(uci.engine.searcher.tt, "resize", broken)
    assert uci.send("setoption name Hash value 64") is False
    assert uci.info_strings() == ["info string error in 'setoption': MemoryError: no room"]
    assert uci.engine.options["Hash"] == 16  # not applied, not claimed
    uci.send("go depth 2")
    (line,) = uci.wait_for_bestmoves()
    assert_legal_bestmove(line, chess.Board())


# --- what info says: aspiration bounds ---------------------------------------------


def test_root_fails_are_reported_as_bounds(uci, monkeypatch) -> None:
    """With a 1 cp aspiration window the root fails high and low; info says lowerbound / upperbound."""
    monkeypatch.setattr(search.driver, "ASPIRATION_WINDOW", 1)
    uci.send("setoption name OwnBook value false")
    uci.send(f"position fen {ITALIAN_BLACK}")
    uci.send("go depth 6")
    uci.wait_for_bestmoves()
    lines = infos(uci.lines())
    bounds = set()
    for line in lines:
        kind = next((word for word in ("lowerbound", "upperbound") if f" {word} " in line), None)
        if kind:
            bounds.add(kind)
            assert field(line, "depth") >= search.driver.ASPIRATION_MIN_DEPTH, line
    assert bounds == {"lowerbound", "upperbound"}
    for depth in range(1, 7):  # every depth ends on an exact score
        last = [line for line in lines if field(line, "depth") == depth][-1]
        assert "bound" not in last, last


# --- a game under movetime, on the node clock --------------------------------------------------


def test_kqk_game_under_movetime_is_won_by_mate(uci, monkeypatch) -> None:
    """Both sides played by the engine, 100 ms a move (5,000 nodes on the node clock): White mates."""
    install_node_clock(monkeypatch, 0.02)
    uci.send("setoption name OwnBook value false")
    uci.send("ucinewgame")
    board = chess.Board(KQK)
    moves: list[str] = []
    while not board.is_game_over() and board.ply() < 80:
        uci.send(f"position fen {KQK}" + (" moves " + " ".join(moves) if moves else ""))
        uci.send("go movetime 130")
        line = uci.wait_for_bestmoves(len(moves) + 1)[-1]
        move = assert_legal_bestmove(line, board)
        board.push(move)
        moves.append(move.uci())
    assert board.is_checkmate() and board.outcome().winner == chess.WHITE, board.fen()
    assert board.ply() <= 60, f"mate took {board.ply()} plies"
