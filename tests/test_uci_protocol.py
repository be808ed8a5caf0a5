"""Fast in-process tests of the UCI front end.

`UciEngine` writes to an `Output` backed by an `io.StringIO`; commands are fed
with `engine.handle(line)`.  Searches run in the engine's own thread, so tests
that `go` poll the output for `bestmove` (with a generous hang guard) and then
join the search thread with `engine.wait_for_search()`.

The pure parsers (`parse_go`, `parse_position`, `board_from_fen`) are tested
directly, including a few Hypothesis properties ("never raises, always yields
sane limits").

Past 500 lines on purpose: it is the one home of the protocol's contract, a
test per command and per malformed variant of it, read in the order of the
UCI specification; split, the contract would have no single place.
"""

from __future__ import annotations

import io
import re
import time

import chess
import chess.polyglot
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from search.alphabeta import CHECK_EVERY
from search.timeman import Limits
from uci_engine.output import Output
from uci_engine.position_cmd import MAX_GO_VALUE, board_from_fen, parse_go, parse_position
from uci_engine.protocol import UciEngine
from tests.fake_clock import install_node_clock

#: Hang guard for anything that waits on the search thread (never a timing assertion).
GUARD = 30.0

START_PERFT = {1: 20, 2: 400, 3: 8902, 4: 197281}
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
KIWIPETE_PERFT = {1: 48, 2: 2039}


class Harness:
    """A `UciEngine` whose output goes to a string buffer."""

    def __init__(self) -> None:
        self.stream = io.StringIO()
        self.out = Output(self.stream)
        self.engine = UciEngine(self.out)
        self._read_upto = 0

    def send(self, line: str) -> bool:
        return self.engine.handle(line)

    def text(self) -> str:
        with self.out.lock:  # the search thread writes concurrently
            return self.stream.getvalue()

    def lines(self) -> list[str]:
        return self.text().splitlines()

    def new_lines(self) -> list[str]:
        """Lines written since the previous call."""
        text = self.text()
        fresh = text[self._read_upto:]
        self._read_upto = len(text)
        return fresh.splitlines()

    def info_strings(self, lines: list[str] | None = None) -> list[str]:
        lines = self.lines() if lines is None else lines
        return [line for line in lines if line.startswith("info string ")]

    def bestmoves(self) -> list[str]:
        return [line for line in self.lines() if line.startswith("bestmove")]

    def wait_for_bestmoves(self, count: int = 1) -> list[str]:
        """Poll until `count` bestmove lines exist, then join the search thread."""
        deadline = time.monotonic() + GUARD
        while len(self.bestmoves()) < count:
            if time.monotonic() > deadline:
                self.engine.wait_for_search()  # stop it so the test ends
                pytest.fail(f"no bestmove within {GUARD}s; output:\n{self.text()[-3000:]}")
            time.sleep(0.005)
        self.engine.wait_for_search()
        return self.bestmoves()

    def wait_for_line(self, prefix: str) -> str:
        deadline = time.monotonic() + GUARD
        while True:
            for line in self.lines():
                if line.startswith(prefix):
                    return line
            if time.monotonic() > deadline:
                self.engine.wait_for_search()
                pytest.fail(f"no line starting {prefix!r} within {GUARD}s; output:\n{self.text()[-3000:]}")
            time.sleep(0.005)

    def close(self) -> None:
        self.engine.wait_for_search()
        self.engine.searcher.close()  # helper processes, if a test set Threads


@pytest.fixture
def uci():
    harness = Harness()
    try:
        yield harness
    finally:
        harness.close()


def bestmove_of(line: str) -> tuple[str, str | None]:
    parts = line.split()
    assert parts[0] == "bestmove" and len(parts) in (2, 4), f"malformed {line!r}"
    ponder = None
    if len(parts) == 4:
        assert parts[2] == "ponder", f"malformed {line!r}"
        ponder = parts[3]
    return parts[1], ponder


def assert_legal_bestmove(line: str, board: chess.Board) -> chess.Move:
    move_text, ponder_text = bestmove_of(line)
    move = chess.Move.from_uci(move_text)
    assert move in board.legal_moves, f"{line!r} is illegal in {board.fen()}"
    if ponder_text is not None:
        after = board.copy()
        after.push(move)
        assert chess.Move.from_uci(ponder_text) in after.legal_moves, f"ponder move of {line!r} is illegal"
    return move


def displayed_fen(harness: Harness) -> str:
    harness.new_lines()
    harness.send("d")
    fens = [line[len("Fen: "):] for line in harness.new_lines() if line.startswith("Fen: ")]
    assert len(fens) == 1, harness.text()
    return fens[0]


# --- uci / isready / quit / unknown commands ------------------------------------


def test_uci_lists_id_and_options_then_uciok(uci):
    assert uci.send("uci") is False
    lines = uci.lines()
    assert lines[-1] == "uciok"
    assert lines[0].startswith("id name Pawnstorm")
    assert any(line.startswith("id author ") for line in lines)
    options = {line for line in lines if line.startswith("option name ")}
    assert options >= {
        "option name Hash type spin default 16 min 1 max 1024",
        "option name Ponder type check default false",
        "option name Clear Hash type button",
        "option name Threads type spin default 1 min 1 max 512",
        "option name Move Overhead type spin default 30 min 0 max 5000",
        "option name OwnBook type check default true",
        "option name BookFile type string default <bundled>",
        "option name MultiPV type spin default 1 min 1 max 500",
        "option name UCI_AnalyseMode type check default false",
        "option name UCI_Chess960 type check default false",
        "option name UCI_ShowWDL type check default false",
        "option name UCI_LimitStrength type check default false",
        "option name UCI_Elo type spin default 1500 min 1000 max 2100",
        "option name SyzygyPath type string default <empty>",
        "option name GaviotaTbPath type string default <empty>",
        "option name SyzygyProbeLimit type spin default 7 min 0 max 7",
    }
    # Nothing else between the header and uciok.
    assert all(line.startswith(("id ", "option ")) for line in lines[:-1])


def test_isready_answers_readyok(uci):
    uci.send("isready")
    assert uci.lines() == ["readyok"]


def test_quit_returns_true_and_other_commands_false(uci):
    for line in ("", "   ", "isready", "ucinewgame", "position startpos", "stop", "ponderhit", "foo bar"):
        assert uci.send(line) is False, line
    assert uci.send("quit") is True
    assert uci.send("  quit  \n") is True


def test_unknown_command_is_silent_unless_debug(uci):
    uci.send("foo bar")
    assert uci.lines() == []
    uci.send("debug on")
    uci.send("foo bar")
    assert any("unknown command 'foo'" in line for line in uci.info_strings())
    uci.send("debug off")
    uci.new_lines()
    uci.send("xyzzy")
    assert uci.new_lines() == []


def test_run_serves_until_quit_and_ignores_the_rest(uci):
    uci.engine.run(io.StringIO("isready\nquit\nisready\n"))
    assert uci.lines() == ["readyok"]


def test_run_stops_at_end_of_input(uci):
    uci.engine.run(io.StringIO("isready\nposition startpos moves e2e4\n"))
    assert uci.lines() == ["readyok"]
    assert uci.engine.board.fen() == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


# --- parse_go ---------------------------------------------------------------------


def test_parse_go_reads_every_field():
    limits, perft, messages = parse_go(
        "wtime 60000 btime 59000 winc 1000 binc 900 movestogo 12 movetime 500 depth 7 nodes 1234 mate 3".split()
    )
    assert messages == [] and perft is None
    assert limits == Limits(wtime=60000, btime=59000, winc=1000, binc=900, movestogo=12,
                            movetime=500, depth=7, nodes=1234, mate=3)


def test_parse_go_empty_is_unlimited():
    limits, perft, messages = parse_go([])
    assert limits == Limits() and perft is None and messages == []


def test_parse_go_infinite_and_ponder():
    limits, _, messages = parse_go(["infinite"])
    assert limits.infinite is True and not limits.ponder and messages == []
    limits, _, messages = parse_go("ponder wtime 1000".split())
    assert limits.ponder is True and not limits.infinite and limits.wtime == 1000 and messages == []


def test_parse_go_perft_without_depth_does_nothing():
    _, perft, messages = parse_go(["perft"])
    assert perft == 0  # reported, and neither perft nor a search runs
    assert any("perft needs a number" in m for m in messages)


def test_parse_go_negative_times_become_zero_with_messages():
    limits, _, messages = parse_go("wtime -100 btime -1 winc -5 movetime -20".split())
    assert (limits.wtime, limits.btime, limits.winc, limits.movetime) == (0, 0, 0, 0)
    assert len(messages) == 4
    assert any("negative wtime -100" in m for m in messages)
    assert all("treated as 0" in m for m in messages)


def test_parse_go_garbage_numbers_are_ignored_with_messages():
    limits, _, messages = parse_go("wtime abc btime 1000 depth x nodes nan movetime inf".split())
    assert limits.wtime is None and limits.depth is None and limits.nodes is None and limits.movetime is None
    assert limits.btime == 1000
    assert len(messages) == 4
    assert any("wtime" in m and "'abc'" in m for m in messages)
    assert all("ignored" in m for m in messages)


def test_parse_go_missing_number_at_end():
    limits, _, messages = parse_go(["depth"])
    assert limits.depth is None
    assert messages == ["go: depth needs a number, got None; ignored"]


def test_parse_go_accepts_float_text_and_clamps_huge_values():
    limits, _, messages = parse_go("wtime 1500.7 btime 1e30 nodes 99999999999999999999".split())
    assert limits.wtime == 1500
    assert limits.btime == MAX_GO_VALUE
    assert limits.nodes == MAX_GO_VALUE
    assert messages == []


def test_parse_go_depth_at_least_one_and_movestogo_zero_dropped():
    limits, _, _ = parse_go("depth 0 movestogo 0".split())
    assert limits.depth == 1
    assert limits.movestogo is None


def test_parse_go_unknown_parameter_reported_and_searchmoves_collected():
    limits, _, messages = parse_go("frobnicate searchmoves e2e4 d2d4 depth 3".split())
    assert limits.depth == 3
    assert limits.searchmoves == ["e2e4", "d2d4"]
    assert any("unknown parameter 'frobnicate'" in m for m in messages)
    # The searchmoves list itself is not reported as unknown parameters.
    assert not any("e2e4" in m or "d2d4" in m for m in messages)


def test_parse_go_searchmoves_then_perft():
    _, perft, _ = parse_go("searchmoves e2e4 perft 2".split())
    assert perft == 2


def test_parse_go_perft():
    assert parse_go(["perft", "3"])[1] == 3
    assert parse_go(["perft", "0"])[1] == 1
    assert parse_go(["perft", "-4"])[1] == 1


_GO_WORDS = ["wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "nodes", "mate",
             "infinite", "ponder", "perft", "searchmoves", "e2e4"]
_GO_TOKENS = st.one_of(
    st.sampled_from(_GO_WORDS),
    st.integers(min_value=-10**25, max_value=10**25).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.text(alphabet="0123456789-+.eEnaif x", min_size=1, max_size=6).filter(lambda s: not s.isspace() and s.strip() == s),
)


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_GO_TOKENS, max_size=12))
def test_parse_go_never_raises_and_limits_are_sane(tokens):
    limits, perft, messages = parse_go(tokens)
    assert all(isinstance(m, str) for m in messages)
    for name in ("wtime", "btime", "winc", "binc", "movetime", "nodes", "mate"):
        value = getattr(limits, name)
        assert value is None or 0 <= value <= MAX_GO_VALUE, (name, value)
    assert limits.depth is None or 1 <= limits.depth <= MAX_GO_VALUE
    assert limits.movestogo is None or 1 <= limits.movestogo <= MAX_GO_VALUE
    assert perft is None or 0 <= perft <= MAX_GO_VALUE  # 0: malformed, nothing runs


# --- parse_position / board_from_fen -------------------------------------------------


def test_parse_position_startpos_and_moves():
    board, messages = parse_position("startpos moves e2e4 e7e5 g1f3".split(), chess.Board())
    assert messages == []
    expected = chess.Board()
    for uci_move in ("e2e4", "e7e5", "g1f3"):
        expected.push_uci(uci_move)
    assert board == expected
    assert board.move_stack == expected.move_stack  # repetition history is kept


def test_parse_position_fen_with_moves():
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    board, messages = parse_position(f"fen {fen} moves e2e4 e8d7".split(), chess.Board())
    assert messages == []
    assert board.fen() == "8/3k4/8/8/4P3/8/8/4K3 w - - 1 2"


def test_parse_position_empty_moves_list():
    board, messages = parse_position(["startpos", "moves"], chess.Board("8/8/8/8/8/8/8/K1k5 w - - 0 1"))
    assert messages == [] and board == chess.Board()


def test_parse_position_illegal_move_keeps_moves_before_it():
    board, messages = parse_position("startpos moves e2e4 e7e5 zzzz d2d4".split(), chess.Board())
    expected = chess.Board()
    expected.push_uci("e2e4")
    expected.push_uci("e7e5")
    assert board == expected
    assert len(messages) == 1
    assert "illegal move 'zzzz'" in messages[0] and "move 3 of 4" in messages[0]


def test_parse_position_null_move_is_illegal():
    """`0000` would hand the move to Black while Black is in check (a king capture next): the list stops there."""
    board, messages = parse_position("startpos moves e2e4 f7f6 d1h5 0000 h5e8".split(), chess.Board())
    assert board.fen() == "rnbqkbnr/ppppp1pp/5p2/7Q/4P3/8/PPPP1PPP/RNB1KBNR b KQkq - 1 2"
    assert len(messages) == 1 and "illegal move '0000'" in messages[0] and "move 4 of 5" in messages[0]
    assert board.is_valid()


def test_parse_position_upper_case_promotion_letter():
    board, messages = parse_position("fen 8/P6k/8/8/8/8/8/K7 w - - 0 1 moves a7a8Q h7g6".split(), chess.Board())
    assert messages == [] and board.fen() == "Q7/8/6k1/8/8/8/8/K7 w - - 1 2"
    _, messages = parse_position("startpos moves E2E4".split(), chess.Board())
    assert len(messages) == 1  # only the promotion letter's case is forgiven


def test_parse_position_legal_looking_but_illegal_move():
    board, messages = parse_position("startpos moves e2e5".split(), chess.Board())
    assert board == chess.Board()
    assert len(messages) == 1 and "'e2e5'" in messages[0]


def test_parse_position_castling_and_promotion_moves():
    board, messages = parse_position(
        "fen r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1 moves e1c1 e8g8 b7b8q".split(), chess.Board()
    )
    assert messages == []
    assert board.piece_at(chess.C1) == chess.Piece(chess.KING, chess.WHITE)
    assert board.piece_at(chess.D1) == chess.Piece(chess.ROOK, chess.WHITE)
    assert board.piece_at(chess.G8) == chess.Piece(chess.KING, chess.BLACK)
    assert board.piece_at(chess.F8) == chess.Piece(chess.ROOK, chess.BLACK)
    assert board.piece_at(chess.B8) == chess.Piece(chess.QUEEN, chess.WHITE)


@pytest.mark.parametrize("tokens", [[], ["startposition"], ["fenn", "8/8/8/8/8/8/8/8"], ["fen"]])
def test_parse_position_bad_setup_keeps_current(tokens):
    current = chess.Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    board, messages = parse_position(tokens, current)
    assert board is current
    assert len(messages) == 1 and "position unchanged" in messages[0]


def test_parse_position_moves_without_setup_keeps_current():
    current = chess.Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    board, messages = parse_position(["moves", "e2e4"], current)
    assert board is current
    assert len(messages) == 1 and "position unchanged" in messages[0]


@pytest.mark.parametrize("setup, fen", [
    (f"fen {KIWIPETE} e2e4 e7e5".split(), KIWIPETE),
    ("startpos e2e4".split(), chess.STARTING_FEN),
])
def test_parse_position_words_after_the_position_are_said_and_ignored(setup, fen):
    """Moves without the word `moves`: the position is set (not the old one kept), the words named."""
    current = chess.Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    board, messages = parse_position(setup, current)
    assert board.fen() == fen
    assert len(messages) == 1 and "ignored" in messages[0] and "e2e4" in messages[0]
    # The moves that do follow `moves` are still played.
    board, messages = parse_position([*setup, "moves", "a2a3"], current)
    assert board.move_stack == [chess.Move.from_uci("a2a3")] and len(messages) == 1


def test_board_from_fen_valid_has_no_fixes():
    result = board_from_fen(KIWIPETE)
    assert not isinstance(result, str)
    board, fixes = result
    assert board.fen() == KIWIPETE and fixes == []


def test_board_from_fen_repairs_impossible_castling_rights():
    fen = "4k3/8/8/8/8/8/8/4K2R w KQkq - 0 1"
    result = board_from_fen(fen)
    assert not isinstance(result, str), result
    board, fixes = result
    assert board.castling_rights == chess.BB_H1  # only White's kingside rook is really there
    assert board.fen() == "4k3/8/8/8/8/8/8/4K2R w K - 0 1"
    assert len(fixes) == 1 and "castling" in fixes[0]
    assert board.is_valid()


def test_board_from_fen_repairs_impossible_en_passant_square():
    result = board_from_fen("4k3/8/8/8/8/8/8/4K3 w - e3 0 1")
    assert not isinstance(result, str), result
    board, fixes = result
    assert board.ep_square is None
    assert len(fixes) == 1 and "en passant" in fixes[0]


@pytest.mark.parametrize("fen, problem", [
    ("8/8/8/8/8/8/8/4K3 w - - 0 1", "no black king"),
    ("4k3/8/8/8/8/8/8/8 b - - 0 1", "no white king"),
    ("8/8/8/3kK3/8/8/8/8 w - - 0 1", "opposite check"),          # kings adjacent
    ("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", "opposite check"),       # side not to move in check
    ("4k3/8/8/8/8/8/8/1K2k3 w - - 0 1", "too many kings"),
    ("P3k3/8/8/8/8/8/8/4K3 w - - 0 1", "pawns on backrank"),
])
def test_board_from_fen_rejects_impossible_positions(fen, problem):
    result = board_from_fen(fen)
    assert isinstance(result, str), f"{fen} accepted"
    assert "impossible position" in result and problem in result


@pytest.mark.parametrize("fen", ["", "   ", "garbage", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1",
                                 "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1"])
def test_board_from_fen_rejects_malformed(fen):
    assert isinstance(board_from_fen(fen), str)


_FUZZ_TOKENS = st.one_of(
    st.sampled_from(["startpos", "fen", "moves", "e2e4", "e7e5", "g1f3", "zzzz", "e1g1", "0000",
                     "8/8/8/8/8/8/8/8", "w", "b", "-", "KQkq", "0", "1", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"]),
    st.text(alphabet="abcdefgh12345678nbrqkNBRQKP/-wx", min_size=1, max_size=10),
)


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["startpos", "fen"]), st.lists(_FUZZ_TOKENS, max_size=10))
def test_parse_position_never_raises_and_returns_valid_board(head, rest):
    current = chess.Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    board, messages = parse_position([head, *rest], current)
    assert all(isinstance(m, str) for m in messages)
    assert board is current or board.is_valid()


# --- position through the engine -------------------------------------------------------


def test_position_command_sets_board(uci):
    uci.send("position startpos moves e2e4 c7c5")
    assert uci.info_strings() == []
    assert displayed_fen(uci) == "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"


def test_position_with_impossible_castling_is_repaired_with_message(uci):
    uci.send("position fen 4k3/8/8/8/8/8/8/4K2R w KQkq - 0 1")
    messages = uci.info_strings()
    assert len(messages) == 1 and "castling" in messages[0]
    assert displayed_fen(uci) == "4k3/8/8/8/8/8/8/4K2R w K - 0 1"


@pytest.mark.parametrize("fen", [
    "8/8/8/8/8/8/8/4K3 w - - 0 1",        # missing black king
    "8/8/8/3kK3/8/8/8/8 w - - 0 1",        # kings adjacent
    "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1",     # Black, not to move, is in check
    "not a fen at all",
])
def test_position_with_bad_fen_is_rejected_and_previous_kept(uci, fen):
    uci.send("position startpos moves d2d4 d7d5")
    before = displayed_fen(uci)
    uci.new_lines()
    uci.send(f"position fen {fen}")
    messages = uci.info_strings(uci.new_lines())
    assert len(messages) == 1 and "position unchanged" in messages[0]
    assert displayed_fen(uci) == before
    assert len(uci.engine.board.move_stack) == 2  # history kept too


def test_position_illegal_move_message_names_the_move(uci):
    uci.send("position startpos moves e2e4 e7e5 zzzz")
    messages = uci.info_strings()
    assert len(messages) == 1 and "'zzzz'" in messages[0]
    assert displayed_fen(uci) == "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"


def test_position_moves_without_setup_keeps_serving(uci):
    # Whatever the parser does with it, the engine reports and keeps the board.
    uci.send("position startpos moves e2e4")
    before = displayed_fen(uci)
    uci.new_lines()
    assert uci.send("position moves e2e4") is False
    assert uci.info_strings(uci.new_lines()), "no message for 'position moves e2e4'"
    assert displayed_fen(uci) == before
    uci.send("isready")
    assert uci.new_lines()[-1] == "readyok"


def test_ucinewgame_resets_to_start(uci):
    uci.send("position fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    uci.send("ucinewgame")
    assert displayed_fen(uci) == chess.STARTING_FEN


# --- d / eval ------------------------------------------------------------------------------


@pytest.mark.parametrize("setup", [
    "startpos",
    "startpos moves e2e4",
    "startpos moves e2e4 d7d5 e4e5 f7f5",  # en passant possible: part of the polyglot key
    f"fen {KIWIPETE}",
    "fen 8/8/8/8/8/5k2/q7/7K b - - 0 1",
])
def test_d_prints_fen_and_polyglot_key(uci, setup):
    uci.send(f"position {setup}")
    words = setup.split()
    board = chess.Board() if words[0] == "startpos" else chess.Board(" ".join(words[1:]))
    for move in words[words.index("moves") + 1:] if "moves" in words else []:
        board.push_uci(move)
    uci.new_lines()
    uci.send("d")
    lines = uci.new_lines()
    fen_lines = [line for line in lines if line.startswith("Fen: ")]
    key_lines = [line for line in lines if line.startswith("Key: ")]
    assert fen_lines == [f"Fen: {board.fen()}"]
    assert len(key_lines) == 1
    key = key_lines[0][len("Key: "):]
    assert re.fullmatch(r"[0-9A-Fa-f]{16}", key), key
    assert int(key, 16) == chess.polyglot.zobrist_hash(board)
    checkers = [line for line in lines if line.startswith("Checkers:")]
    assert len(checkers) == 1
    assert set(checkers[0].split()[1:]) == {chess.square_name(sq) for sq in board.checkers()}


def test_d_known_start_key(uci):
    uci.send("d")
    assert "Key: 463B96181691FC9C" in uci.lines()


def test_d_shows_checkers(uci):
    uci.send("position fen 8/8/8/8/8/5k2/8/6qK w - - 0 1")
    uci.send("d")
    assert "Checkers: g1" in uci.lines()


def test_eval_prints_terms(uci):
    uci.send("eval")
    text = uci.text()
    for term in ("material", "placement", "bishop pair", "phase", "Tapered evaluation", "Final evaluation"):
        assert term in text, f"{term!r} missing from eval output:\n{text}"
    material = [line for line in uci.lines() if line.strip().startswith("material")]
    assert len(material) == 1 and material[0].split()[-2:] == ["0", "0"]
    assert re.search(r"Tapered evaluation: \+0\.00", text)


def test_eval_material_sign(uci):
    uci.send("position fen 4k3/8/8/8/8/8/8/3QK3 b - - 0 1")
    uci.send("eval")
    material = [line for line in uci.lines() if line.strip().startswith("material")]
    mg, eg = (int(x) for x in material[0].split("|")[1].split())
    assert mg > 0 and eg > 0  # White's view, whoever is to move
    tapered = re.search(r"Tapered evaluation: ([+-]\d+\.\d+)", uci.text())
    final = re.search(r"Final evaluation:\s+([+-]\d+\.\d+)", uci.text())
    assert tapered and float(tapered.group(1)) > 0
    assert final and float(final.group(1)) < 0  # Black to move is losing


# --- setoption ---------------------------------------------------------------------------


def test_setoption_threads_starts_and_ends_helper_processes(uci):
    uci.send("setoption name Threads value 3")
    assert uci.info_strings() == []
    assert uci.engine.options["Threads"] == 3 and len(uci.engine.searcher.pool) == 2
    uci.send("setoption name Threads value 1")
    assert uci.engine.searcher.pool is None and uci.new_lines() == []


def test_setoption_ownbook_bad_value_is_rejected(uci):
    uci.send("setoption name OwnBook value maybe")
    messages = uci.info_strings()
    assert len(messages) == 1 and "OwnBook" in messages[0] and "'maybe'" in messages[0]
    assert uci.engine.options["OwnBook"] is True
    uci.send("setoption name OwnBook value false")
    assert uci.engine.options["OwnBook"] is False
    uci.send("setoption name ownbook value TRUE")  # names and check values are case-insensitive
    assert uci.engine.options["OwnBook"] is True
    assert len(uci.info_strings()) == 1


def test_setoption_hash_out_of_range_is_clamped(uci):
    uci.send("setoption name Hash value 99999")
    messages = uci.info_strings()
    assert len(messages) == 1 and "range" in messages[0] and "1024" in messages[0]
    assert uci.engine.options["Hash"] == 1024
    uci.send("setoption name Hash value 0")
    assert uci.engine.options["Hash"] == 1
    uci.send("setoption name Hash value lots")
    assert uci.engine.options["Hash"] == 1
    assert len(uci.info_strings()) == 3


def test_setoption_multiword_names_and_button(uci):
    uci.send("setoption name Move Overhead value 50")
    assert uci.engine.options["Move Overhead"] == 50
    uci.send("go depth 3")
    uci.wait_for_bestmoves()
    table = uci.engine.searcher.tt
    root = chess.polyglot.zobrist_hash(chess.Board())
    assert table.used > 0 and table.probe_data(root) != 0
    uci.send("setoption name Clear Hash")
    assert uci.info_strings() == []
    assert table.used == 0 and table.hashfull() == 0 and table.probe_data(root) == 0


def last_info_nodes(harness: Harness) -> int:
    return int([line for line in harness.lines() if line.startswith("info depth")][-1].split(" nodes ")[1].split()[0])


@pytest.mark.parametrize("clear", [True, False])
def test_clear_hash_makes_the_next_search_a_fresh_engines(clear):
    """After Clear Hash (TT and move-ordering tables) a search is the one a new engine makes."""
    fresh = Harness()
    fresh.send("position startpos moves e2e4 e7e5 g1f3")
    fresh.send("go depth 4")
    fresh.wait_for_bestmoves()
    used = Harness()
    used.send("position startpos moves e2e4 e7e5")
    used.send("go depth 5")
    used.wait_for_bestmoves()
    if clear:
        used.send("setoption name Clear Hash")
    used.send("position startpos moves e2e4 e7e5 g1f3")
    used.send("go depth 4")
    used.wait_for_bestmoves(2)
    # Without the clear, what the first search learnt changes the tree (the control).
    assert (last_info_nodes(used) == last_info_nodes(fresh)) == clear

@pytest.mark.parametrize("line", ["setoption", "setoption name", "setoption value 3", "setoption name Foo value 1",
                                  "setoption name Hash"])
def test_setoption_malformed_or_unknown_gives_message(uci, line):
    uci.send(line)
    assert len(uci.info_strings()) == 1
    assert uci.engine.options["Hash"] == 16


def test_setoption_bad_book_file_reports_and_engine_still_plays(uci, tmp_path):
    missing = tmp_path / "nope.bin"
    uci.send(f"setoption name BookFile value {missing}")
    messages = uci.info_strings()
    assert len(messages) == 1 and "without a book" in messages[0]
    uci.send("position startpos")
    uci.send("go wtime 2000 btime 2000 winc 0 binc 0")
    (line,) = uci.wait_for_bestmoves()
    assert_legal_bestmove(line, chess.Board())


def test_setoption_book_file_empty_means_no_book(uci):
    """`<empty>` asks for no book (as for the tablebase paths): no complaint, and the first move is searched."""
    uci.send("setoption name BookFile value <empty>")
    assert uci.info_strings() == []
    uci.send("position startpos")
    uci.send("go wtime 2000 btime 2000 winc 0 binc 0")
    (line,) = uci.wait_for_bestmoves()
    assert any(info.startswith("info depth") for info in uci.lines())  # the bundled book would answer unsearched
    assert_legal_bestmove(line, chess.Board())


# --- perft -----------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_go_perft_startpos(uci, depth):
    uci.send(f"go perft {depth}")
    lines = uci.lines()
    assert lines[-1] == f"Nodes searched: {START_PERFT[depth]}"
    per_move = {}
    for line in lines:
        match = re.fullmatch(r"([a-h][1-8][a-h][1-8][qrbn]?): (\d+)", line)
        if match:
            per_move[match.group(1)] = int(match.group(2))
    assert set(per_move) == {move.uci() for move in chess.Board().legal_moves}
    assert sum(per_move.values()) == START_PERFT[depth]
    assert uci.bestmoves() == []  # perft does not search


def test_go_perft_3_divide_values(uci):
    uci.send("go perft 3")
    lines = set(uci.lines())
    # A few well-known divide counts from the start position.
    for expected in ("e2e4: 600", "g1f3: 440", "a2a3: 380", "b1c3: 440", "h2h4: 420"):
        assert expected in lines


def test_perft_command_and_kiwipete(uci):
    uci.send(f"position fen {KIWIPETE}")
    uci.send("perft 2")
    assert uci.lines()[-1] == f"Nodes searched: {KIWIPETE_PERFT[2]}"
    uci.new_lines()
    uci.send("go perft 1")
    assert uci.new_lines()[-1] == f"Nodes searched: {KIWIPETE_PERFT[1]}"


def test_perft_bad_depth_message(uci):
    uci.send("perft x")
    assert len(uci.info_strings()) == 1
    assert not any(line.startswith("Nodes searched") for line in uci.lines())


# --- go / search -------------------------------------------------------------------------


def test_go_depth_prints_exactly_one_legal_bestmove(uci):
    uci.send("position startpos moves e2e4 e7e5")
    assert uci.send("go depth 2") is False
    (line,) = uci.wait_for_bestmoves()
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    assert_legal_bestmove(line, board)
    infos = [line for line in uci.lines() if line.startswith("info depth")]
    assert [int(line.split()[2]) for line in infos if "bound" not in line][-1] == 2
    assert uci.lines()[-1].startswith("bestmove")


def test_go_before_position_searches_start(uci):
    uci.send("go depth 1")
    (line,) = uci.wait_for_bestmoves()
    assert_legal_bestmove(line, chess.Board())


def test_go_reports_messages_and_still_searches(uci):
    uci.send("go wtime -5 depth abc nodes 500")
    (line,) = uci.wait_for_bestmoves()
    assert_legal_bestmove(line, chess.Board())
    messages = uci.info_strings()
    assert any("negative wtime" in m for m in messages)
    assert any("depth needs a number" in m for m in messages)


def test_go_infinite_waits_for_stop_then_one_bestmove(uci):
    uci.send("position fen 8/8/8/4k3/8/8/8/4K2Q w - - 0 1")
    uci.send("go infinite")
    uci.wait_for_line("info depth")
    uci.send("isready")
    uci.wait_for_line("readyok")
    assert uci.bestmoves() == []  # infinite: no bestmove before stop
    uci.send("stop")
    (line,) = uci.wait_for_bestmoves()
    assert_legal_bestmove(line, chess.Board("8/8/8/4k3/8/8/8/4K2Q w - - 0 1"))
    uci.send("stop")  # a second stop has nothing to stop
    assert len(uci.bestmoves()) == 1


def test_go_while_searching_finishes_the_first_search(uci):
    uci.send("go infinite")
    uci.wait_for_line("info depth")
    uci.send("position startpos moves e2e4")
    uci.send("go depth 1")
    first, second = uci.wait_for_bestmoves(2)
    assert_legal_bestmove(first, chess.Board())
    board = chess.Board()
    board.push_uci("e2e4")
    assert_legal_bestmove(second, board)


def test_go_mate_finds_the_mate(uci):
    fen = "8/8/8/8/8/5k2/q7/7K b - - 0 1"
    uci.send(f"position fen {fen}")
    uci.send("go mate 1")
    (line,) = uci.wait_for_bestmoves()
    board = chess.Board(fen)
    board.push(assert_legal_bestmove(line, board))
    assert board.is_checkmate()
    assert any("score mate 1" in line for line in uci.lines())


@pytest.mark.parametrize("fen", [
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",   # stalemate
    "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1",   # checkmate
])
def test_go_without_legal_moves_gives_no_bestmove(uci, fen):
    uci.send(f"position fen {fen}")
    uci.send("go depth 3")
    assert uci.wait_for_bestmoves() == ["bestmove (none)"]
    # The score line first, as Stockfish sends it: mated, or a draw.
    mated = chess.Board(fen).is_check()
    assert uci.lines()[-2] == ("info depth 0 score mate 0" if mated else "info depth 0 score cp 0")


@pytest.mark.parametrize("searchmoves, searched, message", [
    ("e2e5 g1f3", {"g1f3"}, "info string go: searchmoves e2e5 not legal here, ignored"),
    ("e2e5 a1a8", None, "info string go: searchmoves e2e5 a1a8 not legal here, ignored; searching every move"),
    ("0000 b1c3", {"b1c3"}, "info string go: searchmoves 0000 not legal here, ignored"),
])
def test_illegal_searchmoves_are_named(uci, searchmoves, searched, message):
    uci.send("setoption name OwnBook value false")
    uci.send("position startpos")
    uci.send(f"go depth 2 searchmoves {searchmoves}")
    (line,) = uci.wait_for_bestmoves()
    move = assert_legal_bestmove(line, chess.Board())
    assert searched is None or move.uci() in searched
    assert uci.info_strings() == [message]


def test_searchmoves_castling_in_either_notation(uci):
    """Without Chess960, `e1h1` is castling in `position` (python-chess reads it so); so it is in `searchmoves`."""
    uci.send("setoption name OwnBook value false")
    uci.send("position fen r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1")
    uci.send("go depth 2 searchmoves e1h1")
    (line,) = uci.wait_for_bestmoves()
    assert line.split()[1] == "e1g1" and not uci.info_strings()


def test_a_clock_given_only_for_the_opponent_is_ours_empty(uci, monkeypatch):
    """Black to move, only White's clock: an answer at once (our clock read as 0), not an endless search."""
    install_node_clock(monkeypatch, 0.01)
    uci.send("setoption name OwnBook value false")
    uci.send("position startpos moves e2e4")
    uci.send("go wtime 60000 winc 0")
    (line,) = uci.wait_for_bestmoves()
    board = chess.Board()
    board.push_uci("e2e4")
    assert_legal_bestmove(line, board)


def test_go_clock_with_book_gives_book_or_searched_move(uci):
    uci.send("position startpos")
    uci.send("go wtime 3000 btime 3000 winc 50 binc 50")
    (line,) = uci.wait_for_bestmoves()
    assert_legal_bestmove(line, chess.Board())


@pytest.mark.parametrize("go", ["go movetime 1", "go nodes 1", "go depth 1", "go wtime 0 btime 0",
                                "go movetime 0", "go depth 0", "go nodes 0"])
def test_go_tiny_limits_still_give_a_legal_move(uci, go):
    uci.send(f"position fen {KIWIPETE}")
    uci.send(go)
    (line,) = uci.wait_for_bestmoves()
    assert_legal_bestmove(line, chess.Board(KIWIPETE))


@pytest.mark.parametrize("nodes", [100, 1000, 5000])
def test_go_nodes_limit(uci, nodes):
    uci.send(f"go nodes {nodes}")
    (line,) = uci.wait_for_bestmoves()
    assert_legal_bestmove(line, chess.Board())
    reported = [int(info.split(" nodes ")[1].split()[0]) for info in uci.lines()
                if info.startswith("info depth") and " currmove " not in info]
    assert reported, "depth 1 takes fewer nodes than any of these limits"
    # The count is looked at every CHECK_EVERY nodes: the search stops at the first look past the limit.
    assert max(reported) < nodes + CHECK_EVERY


@pytest.mark.parametrize("go", ["go", "go depth abc"])
def test_engine_process_searches_a_go_without_a_clock_from_the_book_position(raw, go):
    """What a GUI that analyses sends: the real process searches (the book is for clocks only)."""
    raw.send("position startpos")
    raw.send(go)
    _, before = raw.expect("info depth")
    raw.send("stop")
    _, after = raw.bestmove(chess.Board())
    strings = [line for line in before + after if line.startswith("info string")]
    assert not any("book move" in line for line in strings), strings
    assert len(strings) == (go != "go"), strings  # `abc` is named once
