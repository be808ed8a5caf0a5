"""The analysis subcommands: `analyse`, `epd`, `annotate` (through `main([...])`).

Searches use small node/depth limits so that the file runs in seconds.
"""
from __future__ import annotations

import io
import re
import signal
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from search.driver import Iteration
from search.types import EXACT, LOWER, MATE, UPPER, mate_in
from uci_engine.analyse import final_lines
from uci_engine.annotate import classify, graph_paths
from uci_engine.cli import main
from uci_engine.cli_support import format_score

MATE_IN_1_WHITE = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"   # Rd8#
MATE_IN_1_BLACK = "3r2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1"   # Rd1#
WAC_001 = "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - bm Qg6; id \"WAC.001\";"

# 2... Qg5?? puts the queen where the f3 knight takes it.
HANGING_QUEEN_PGN = """[Event "Hanging queen"]
[White "Alice"]
[Black "Bob"]
[Result "1-0"]

1. e4 e5 2. Nf3 Qg5 3. Nxg5 Nc6 4. d4 1-0
"""

# 3... Nf6?? allows 4. Qxf7#: the game ends in checkmate.
SCHOLARS_MATE_PGN = """[Event "Scholar's mate"]
[Result "1-0"]

1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0
"""


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def expect_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The command must fail as a usage error (exit status 2, message, no traceback)."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


# --- scores -------------------------------------------------------------------

@pytest.mark.parametrize("score, turn, text", [
    (35, chess.WHITE, "+0.35"),
    (35, chess.BLACK, "-0.35"),
    (-120, chess.BLACK, "+1.20"),
    (0, chess.WHITE, "+0.00"),
    (MATE - 1, chess.WHITE, "#1"),
    (MATE - 1, chess.BLACK, "#-1"),
    (MATE - 3, chess.WHITE, "#2"),
    (-(MATE - 2), chess.WHITE, "#-1"),
    (-(MATE - 2), chess.BLACK, "#1"),
])
def test_scores_are_white_view_pawns_and_mates(score: int, turn: chess.Color, text: str) -> None:
    assert format_score(score, turn) == text


def test_mate_in_counts_moves_not_plies() -> None:
    assert mate_in(MATE - 1) == 1 and mate_in(MATE - 5) == 3
    assert mate_in(-MATE) == 0 and mate_in(-(MATE - 4)) == -2
    assert mate_in(250) is None


# --- analyse ------------------------------------------------------------------

def test_analyse_finds_mate_in_one_and_prints_san(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(["analyse", "--fen", MATE_IN_1_WHITE, "--nodes", "5000"], capsys)
    assert status == 0
    assert "White's point of view" in out
    assert re.search(r"^depth +1/\d+ +line 1 +#1 +nodes +\d+ .* 1\. Rd8#$", out, re.MULTILINE)
    final = out.split("Final (")[1]
    assert re.search(r"^ 1\. +#1  1\. Rd8#$", final, re.MULTILINE)
    assert out.rstrip().endswith("Best move: Rd8#")
    # A settled mate ends the search: no run on to the maximum depth.
    assert len(re.findall(r"^depth ", out, re.MULTILINE)) <= 8


def test_analyse_black_to_move_mate_is_negative_from_whites_view(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(["analyse", "--fen", MATE_IN_1_BLACK, "--depth", "3"], capsys)
    assert status == 0
    assert "Black to move" in out
    assert re.search(r"^ 1\. +#-1  1\.\.\. ?Rd1#$", out, re.MULTILINE)
    assert "Best move: Rd1#" in out


def test_analyse_depth_limit_reports_each_depth(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(["analyse", "--depth", "3"], capsys)
    assert status == 0
    depths = [int(d) for d in re.findall(r"^depth +(\d+)/", out, re.MULTILINE)]
    assert depths and max(depths) == 3 and depths == sorted(depths)
    assert "Final (depth 3," in out
    score = re.search(r"^ 1\. +([+-]\d+\.\d\d)  1\. \S+", out, re.MULTILINE)
    assert score and abs(float(score.group(1))) < 2


def test_analyse_movetime_searches_a_forced_move_deeply(capsys: pytest.CaptureFixture[str]) -> None:
    # Legall's mate after 6. Bxf7+: Ke7 is forced, then Nd5#.  Under a game
    # clock the driver answers a forced move after depth 1; analysis must not.
    # The generous movetime is a hang guard: the search ends by itself once the
    # mate is settled (depth 2 x 1 + 2 = 4), whatever the machine's speed.
    fen = "rn1qkbnr/ppp2B1p/3p2p1/4N3/4P3/2N5/PPPP1PPP/R1BbK2R b KQkq - 0 6"
    status, out, _ = run_main(["analyse", "--fen", fen, "--movetime", "60000"], capsys)
    assert status == 0
    assert re.search(r"^ 1\. +#1  6\.\.\. ?Ke7 7\. Nd5#$", out, re.MULTILINE)
    assert [int(depth) for depth in re.findall(r"^depth +(\d+)/", out, re.MULTILINE)] == [1, 2, 3, 4]


def test_analyse_multipv_lines_are_numbered_from_one(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(["analyse", "--depth", "3", "--multipv", "3"], capsys)
    assert status == 0
    reported = re.findall(r"^depth +(\d+)/\d+ +line (\d+) +([+-]\d+\.\d\d) ", out, re.MULTILINE)
    # Every depth reports lines 1, 2, 3 in that order, best (for White, to move) first.
    assert [(int(depth), int(line)) for depth, line, _ in reported] == [(d, k) for d in (1, 2, 3) for k in (1, 2, 3)]
    for depth in (1, 2, 3):
        scores = [float(score) for d, _, score in reported if int(d) == depth]
        assert scores == sorted(scores, reverse=True), out
    final = re.findall(r"^ ?(\d)\. +\S+  (1\. \S+)", out.split("Final (depth 3,")[1], re.MULTILINE)
    assert [int(number) for number, _ in final] == [1, 2, 3]
    assert len({line for _, line in final}) == 3  # distinct first moves


def test_analyse_multipv_is_capped_by_the_number_of_legal_moves(capsys: pytest.CaptureFixture[str]) -> None:
    fen = "k7/8/8/8/8/8/6r1/7K w - - 0 1"  # Kxg2 is the only legal move
    status, out, _ = run_main(["analyse", "--fen", fen, "--depth", "2", "--multipv", "4"], capsys)
    assert status == 0
    assert "1 line;" in out
    assert "Best move: Kxg2" in out


@pytest.mark.parametrize("fen, reason", [
    ("not a fen", "invalid FEN"),
    ("8/8/8/8/8/8/8/8 w - - 0 1", "impossible position"),
    ("", "empty FEN"),
])
def test_analyse_rejects_bad_fen_cleanly(fen: str, reason: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = expect_usage_error(["analyse", "--fen", fen, "--depth", "1"], capsys)
    assert "pawnstorm analyse: error: argument --fen:" in err
    assert reason in err


@pytest.mark.parametrize("argv", [
    ["analyse", "--depth", "2", "--nodes", "100"],   # one limit only
    ["analyse", "--depth", "0"],
    ["analyse", "--movetime", "soon"],
    ["analyse", "--multipv", "-1"],
])
def test_analyse_rejects_bad_options(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    expect_usage_error(argv, capsys)


def test_analyse_of_a_finished_game_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(["analyse", "--fen", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"], capsys)
    assert status == 0
    assert "No moves to analyse: stalemate." in out


def line(depth: int, multipv: int, move: str, score: int = 0, bound: int = EXACT,
         partial: bool = False) -> Iteration:
    return Iteration(depth, depth, score, bound, 100 * depth, 1.0, 0, [chess.Move.from_uci(move)],
                     partial=partial, multipv=multipv)


def test_final_lines_are_the_deepest_complete_set() -> None:
    reports = [
        line(1, 1, "e2e4"), line(1, 2, "d2d4"),
        line(2, 1, "d2d4"), line(2, 2, "e2e4"),
        line(3, 1, "e2e4"),                      # depth 3 cut short before line 2
    ]
    assert [(r.depth, r.multipv) for r in final_lines(reports, 2)] == [(2, 1), (2, 2)]
    assert [(r.depth, r.multipv) for r in final_lines(reports, 1)] == [(3, 1)]


def test_final_lines_fall_back_when_fewer_lines_are_reported() -> None:
    reports = [line(1, 1, "e2e4"), line(2, 1, "d2d4")]
    assert [(r.depth, r.multipv) for r in final_lines(reports, 3)] == [(2, 1)]


def test_final_lines_ignore_bounds_and_use_a_proven_new_best_move() -> None:
    reports = [line(1, 1, "e2e4"), line(2, 1, "e2e4", bound=UPPER), line(2, 1, "d2d4", bound=LOWER)]
    assert final_lines(reports, 1)[0].depth == 1
    reports.append(line(2, 1, "d2d4", bound=LOWER, partial=True))
    assert final_lines(reports, 1)[0].pv[0] == chess.Move.from_uci("d2d4")
    same_move = [line(1, 1, "e2e4"), line(2, 1, "e2e4", bound=LOWER, partial=True)]
    assert final_lines(same_move, 1)[0].bound == EXACT


# --- epd ----------------------------------------------------------------------

def write_suite(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "suite.epd"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_epd_reports_solved_count_and_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(tmp_path, [
        WAC_001,
        "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - bm Rd8#; id \"back rank\";",
        "# a comment line",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - am f3 g4; id \"avoid\";",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - bm a3; id \"unlikely\";",
        "this is not an EPD line",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - id \"no bm\";",
    ])
    status, out, err = run_main(["epd", str(suite), "--depth", "5"], capsys)
    assert status == 0
    assert "4 positions, depth 5 each" in out
    failures = [text for text in out.splitlines() if text.startswith("FAIL")]
    assert len(failures) == 1 and failures[0].startswith("FAIL unlikely: played ")
    assert "wanted bm a3" in failures[0]
    assert re.search(r"^solved 3/4 \(75\.0%\)", out, re.MULTILINE)
    assert "line 6: skipped, cannot parse EPD" in err
    assert "line 7: skipped, no bm or am operation" in err
    assert "epd:" not in err and "%|" not in err  # no progress bar when stderr is not a terminal


def test_epd_wac_entries_and_forced_progress_bar(repo_root: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    wac = (repo_root / "data" / "suites" / "wac.epd").read_text(encoding="utf-8").splitlines()
    suite = write_suite(tmp_path, [wac[0], wac[2]])  # WAC.001 Qg6, WAC.003 Rg3
    status, out, err = run_main(["epd", str(suite), "--nodes", "20000", "--progress"], capsys)
    assert status == 0
    # Both are found at 20,000 nodes (a fixed node count: the same on every machine).
    assert re.search(r"^solved 2/2 ", out, re.MULTILINE), out
    assert "FAIL" not in out
    # The last state of the tqdm bar: both positions done, the solved count beside it.
    assert re.search(r"epd: 100%\|[^|]*\| 2/2 \[[^]]*, solved 2\]", err)


def test_epd_skips_operations_that_name_no_moves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`bm "e4"` (a string), `bm 17` (a number) and an empty `am;` are reported and skipped; a byte-order mark is no part of the FEN."""
    start = chess.STARTING_FEN.rsplit(" ", 2)[0]
    suite = tmp_path / "suite.epd"
    suite.write_text("\ufeff" + "\n".join([
        f"{MATE_IN_1_WHITE.rsplit(' ', 2)[0]} bm Rd8#; id \"mate\";",
        f'{start} bm "e4"; id "quoted";',
        f"{start} bm 17;",
        f"{start} am;",
    ]) + "\n", encoding="utf-8")
    status, out, err = run_main(["epd", str(suite), "--depth", "1"], capsys)
    assert status == 0
    assert re.search(r"^solved 1/1 ", out, re.MULTILINE), out
    for number in (2, 3):
        assert f"line {number}: skipped, bm must name moves" in err
    assert "line 4: skipped, am must name moves" in err and "line 1" not in err


def test_epd_without_a_position_to_search_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_main(["epd", str(write_suite(tmp_path, ["# only a comment"])), "--depth", "1"], capsys)
    assert status == 1 and "no position to search" in err and "solved" not in out


def test_epd_missing_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = expect_usage_error(["epd", str(tmp_path / "absent.epd")], capsys)
    assert "cannot read" in err


# --- annotate -----------------------------------------------------------------

def annotate_text(tmp_path: Path, pgn: str, capsys: pytest.CaptureFixture[str],
                  extra: list[str] = ()) -> tuple[chess.pgn.Game, str, str]:
    source = tmp_path / "game.pgn"
    source.write_text(pgn, encoding="utf-8")
    status, out, err = run_main(["annotate", str(source), "--nodes", "3000", *extra], capsys)
    assert status == 0
    game = chess.pgn.read_game(io.StringIO(out))
    assert game is not None and not game.errors
    return game, out, err


def test_annotate_marks_a_hanging_queen_as_a_blunder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game, out, err = annotate_text(tmp_path, HANGING_QUEEN_PGN, capsys)
    moves = {node.san(): node for node in game.mainline()}
    queen = moves["Qg5"]
    assert chess.pgn.NAG_BLUNDER in queen.nags
    assert "Blunder" in queen.comment and "was best" in queen.comment
    assert queen.eval() is not None and queen.eval().white().score() > 300
    assert queen.parent.variations[0].move == queen.move  # the game stays the main line
    assert len(queen.parent.variations) == 2  # plus the engine's line
    assert not moves["Nxg5"].nags  # taking the queen is best
    assert all(node.eval() is not None for node in game.mainline())
    assert game.headers["Annotator"].startswith("Pawnstorm")
    assert [node.move for node in game.mainline()] == [
        node.move for node in chess.pgn.read_game(io.StringIO(HANGING_QUEEN_PGN)).mainline()]
    assert "Black 1??" in err


def test_annotate_progress_bar_counts_the_positions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = annotate_text(tmp_path, HANGING_QUEEN_PGN, capsys, ["--progress"])
    assert re.search(r"annotate: 100%\|[^|]*\| 8/8 \[", err)  # the start position and 7 plies
    _, _, err = annotate_text(tmp_path, HANGING_QUEEN_PGN, capsys)
    assert "%|" not in err  # not drawn when stderr is not a terminal


def test_annotate_handles_a_game_ending_in_mate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game, out, _ = annotate_text(tmp_path, SCHOLARS_MATE_PGN, capsys)
    moves = {node.san(): node for node in game.mainline()}
    assert chess.pgn.NAG_BLUNDER in moves["Nf6"].nags
    assert moves["Nf6"].eval().white().mate() == 1
    assert not moves["Qxf7#"].nags
    assert game.end().board().is_checkmate()


def test_annotate_writes_to_a_file_and_keeps_comments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "game.pgn"
    source.write_text(HANGING_QUEEN_PGN.replace("Nc6", "Nc6 { too late [%eval 1.00] }"), encoding="utf-8")
    target = tmp_path / "out.pgn"
    status, out, _ = run_main(["annotate", str(source), "--nodes", "2000", "-o", str(target)], capsys)
    assert status == 0 and out == ""
    game = chess.pgn.read_game(io.StringIO(target.read_text(encoding="utf-8")))
    node = next(node for node in game.mainline() if node.san() == "Nc6")
    assert "too late" in node.comment
    assert node.comment.count("[%eval") == 1 and node.eval().white().score() > 300


def test_annotate_no_games_and_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.pgn"
    empty.write_text("", encoding="utf-8")
    status, _, err = run_main(["annotate", str(empty)], capsys)
    assert status == 1 and "no games" in err
    expect_usage_error(["annotate", str(tmp_path / "absent.pgn")], capsys)


def test_annotate_skips_what_it_cannot_annotate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad FEN tag, an impossible position and a variant are skipped, a null move cuts its game, and
    text python-chess cannot read ends the file; the other games are annotated."""
    pgn = "\n\n".join([
        HANGING_QUEEN_PGN,
        '[Event "bad fen"]\n[SetUp "1"]\n[FEN "garbage"]\n\n1. e4 *',
        '[Event "no black king"]\n[SetUp "1"]\n[FEN "8/8/8/8/8/8/8/4K3 w - - 0 1"]\n\n1. Ke2 *',
        '[Event "zh"]\n[Variant "Crazyhouse"]\n\n1. e4 d5 2. exd5 Qxd5 3. Nc3 Qd8 4. P@e4 *',
        '[Event "pass"]\n\n1. e4 e5 2. -- Nc6 *',
        '[Event "broken"]\n\n1. e4 ( d5 ) ) ) e5 *',
        SCHOLARS_MATE_PGN,
    ])
    source = tmp_path / "games.pgn"
    source.write_text(pgn, encoding="utf-8")
    status, out, err = run_main(["annotate", str(source), "--nodes", "500"], capsys)
    assert status == 0
    games = []
    stream = io.StringIO(out)
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    assert [game.headers["Event"] for game in games] == ["Hanging queen", "pass"]
    assert [node.san() for node in games[1].mainline()] == ["e4", "e5"]
    for number, reason in ((2, "start position cannot be set up"), (3, "start position is impossible"),
                           (4, "variant 'Crazyhouse'"), (6, "unreadable PGN")):
        assert f"warning: game {number}: " in err and reason in err
    assert "warning: game 5: null move at ply 3" in err


def test_annotate_says_at_once_that_the_output_cannot_be_written(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "game.pgn"
    source.write_text(HANGING_QUEEN_PGN, encoding="utf-8")
    status, _, err = run_main(["annotate", str(source), "-o", str(tmp_path / "absent" / "out.pgn")], capsys)
    assert status == 1 and "cannot write" in err
    assert "positions," not in err  # said before any search


@pytest.mark.parametrize("graph", [".", "{tmp}", "{tmp}/absent/eval.png"])
def test_annotate_says_at_once_that_the_graph_cannot_be_written(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                graph: str) -> None:
    """A folder, or a file in a folder that is not there: said before the searches (two games: numbered names)."""
    source = tmp_path / "games.pgn"
    source.write_text(HANGING_QUEEN_PGN + "\n\n" + SCHOLARS_MATE_PGN, encoding="utf-8")
    status, _, err = run_main(["annotate", str(source), "--nodes", "200", "--graph", graph.format(tmp=tmp_path)],
                              capsys)
    assert status == 1 and "annotate: cannot write the graph: " in err, err
    assert "positions," not in err and "Traceback" not in err


def test_annotate_finds_no_game_in_text_that_is_not_pgn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "notes.txt"
    source.write_text("hello world\n\nSome prose, and another paragraph.\n", encoding="utf-8")
    status, out, err = run_main(["annotate", str(source), "--nodes", "200"], capsys)
    assert status == 1 and "no games found" in err and "not a game" in err and out == ""


def test_annotate_names_text_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "latin1.pgn"
    source.write_bytes(HANGING_QUEEN_PGN.replace("Alice", "Caf\u00e9").encode("latin-1"))
    status, _, err = run_main(["annotate", str(source), "--nodes", "500"], capsys)
    assert status == 0 and "is not UTF-8 text" in err


def test_thresholds_are_limited_by_win_chances() -> None:
    assert classify(300, 0.35) == chess.pgn.NAG_BLUNDER
    assert classify(300, 0.25) == chess.pgn.NAG_MISTAKE
    assert classify(160, 0.35) == chess.pgn.NAG_MISTAKE
    assert classify(80, 0.12) == chess.pgn.NAG_DUBIOUS_MOVE
    assert classify(60, 0.5) is None
    # +9 -> +6: 300 cp lost, the result hardly changes.
    assert classify(300, 0.05) is None
    assert classify(300, 0.05, cp_only=True) == chess.pgn.NAG_BLUNDER


def test_graph_paths_are_numbered_for_several_games() -> None:
    assert graph_paths("out/eval.png", 1) == [Path("out/eval.png")]
    assert graph_paths("eval.png", 2) == [Path("eval-1.png"), Path("eval-2.png")]


def test_annotate_graph_writes_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "eval.png"
    _, _, err = annotate_text(tmp_path, HANGING_QUEEN_PGN, capsys, ["--graph", str(png)])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"graph written to {png}" in err


def test_annotate_graph_without_matplotlib_still_writes_the_pgn(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    png = tmp_path / "eval.png"
    game, _, err = annotate_text(tmp_path, HANGING_QUEEN_PGN, capsys, ["--graph", str(png)])
    assert "--graph needs matplotlib" in err
    assert not png.exists()
    assert any(chess.pgn.NAG_BLUNDER in node.nags for node in game.mainline())


# --- the old subcommands still work -----------------------------------------

def test_bench_and_perft_are_still_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(["perft", "2"], capsys)
    assert status == 0 and "Nodes searched: 400" in out
    status, out, _ = run_main(["bench", "1"], capsys)
    assert status == 0 and "Nodes searched  : " in out


def test_perft_fen_is_checked_as_analyse_checks_it(capsys: pytest.CaptureFixture[str]) -> None:
    """A repaired FEN is noted; a bad one is the perft command's usage error."""
    status, out, err = run_main(["perft", "1", "--fen", "4k3/8/8/8/8/8/8/4K3 w KQkq - 0 1"], capsys)
    assert status == 0 and "Nodes searched: 5" in out and "note: " in err and "castling" in err
    err = expect_usage_error(["perft", "1", "--fen", "not a fen"], capsys)
    assert "usage: pawnstorm perft" in err and "invalid FEN" in err


@pytest.mark.parametrize("argv, message", [
    (["perft", "0"], "positive whole number"),
    (["bench", "-3"], "positive whole number"),
    (["bench", "1", "--threads", "0"], "positive whole number"),
    (["analyse", "--depth", "1", "--hash", "1000000"], "at most 1024"),
    (["analyse", "--movetime", "10000000000000"], "at most 1000000000"),
])
def test_out_of_range_numbers_are_usage_errors(argv: list[str], message: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert message in expect_usage_error(argv, capsys)


@pytest.mark.parametrize("command", ["perft", "bench"])
def test_ctrl_c_in_perft_and_bench_ends_quietly(command: str, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import uci_engine.cli as cli

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "divide" if command == "perft" else "bench", interrupted)
    status, _, err = run_main([command, "1"], capsys)
    assert status == 130 and f"{command}: interrupted" in err and "Traceback" not in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_output_to_a_full_disk_is_one_line_of_error(repo_root: Path, engine_env: dict[str, str]) -> None:
    import subprocess

    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "uci_engine", "perft", "3"], cwd=repo_root, env=engine_env,
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == "pawnstorm: cannot write the output: No space left on device"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="no /proc here")
def test_the_program_keeps_sigpipe_ignored(repo_root: Path, engine_env: dict[str, str]) -> None:
    """A write to a Lazy SMP helper that just died must be an exception `search.smp`
    handles, not a signal that kills the engine: the running program ignores SIGPIPE."""
    import subprocess

    engine = subprocess.Popen([sys.executable, "-m", "uci_engine"], cwd=repo_root, env=engine_env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        engine.stdin.write("isready\n")
        engine.stdin.flush()
        assert engine.stdout.readline().strip() == "readyok"  # serving: the program's own settings are in place
        status = Path(f"/proc/{engine.pid}/status").read_text()
        ignored = int(next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1], 16)
        assert ignored >> (signal.SIGPIPE - 1) & 1
    finally:
        engine.stdin.close()
        engine.wait(timeout=60)
