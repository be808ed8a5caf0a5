"""tools/match.py and tools/suite.py: the project's match runner and suite runner.

The statistics are checked against figures worked out by hand for known
counts (and, for the SPRT, against what the team's earlier shared runner
printed for the same counts); the runner itself by real games: Pawnstorm at
a few nodes against itself, and scripted engines (tests/fake_uci.py) that
crash, play an illegal move, stall or overrun their clock.
"""
from __future__ import annotations

import dataclasses
import io
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import chess
import chess.pgn
import pytest

from tests.conftest import REPO_ROOT

from tools import match
from tools import paired
from tools import suite
from tools.common import DEFAULT_OPENINGS, sprt_bounds, sprt_llr
from tools.match_game import Fault, GameResult, Job

FAKE = REPO_ROOT / "tests" / "fake_uci.py"
PYTHON = shlex.quote(sys.executable)


def fake(mode: str) -> str:
    return f"{PYTHON} {shlex.quote(str(FAKE))} {mode}"


def game(number: int, a_points: float) -> GameResult:
    """Game `number` of a match (colours alternate per pair as match.py deals them) where engine a scored `a_points`."""
    white, black = ("a", "b") if number % 2 == 0 else ("b", "a")
    white_points = a_points if white == "a" else 1 - a_points
    result = {1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}[white_points]
    return GameResult(number, number // 2, white, black, result, "test", [], "")


def games_of_pairs(pairs: list[tuple[float, float]]) -> list[GameResult]:
    return [game(2 * i + k, pts) for i, both in enumerate(pairs) for k, pts in enumerate(both)]


# --- statistics, by hand ------------------------------------------------------------

#: Ten pairs: LL, LD x2, DD x2 + WL, WD x2, WW x2 -> pentanomial [1, 2, 3, 2, 2].
TEN_PAIRS = [(0, 0), (0, .5), (.5, 0), (.5, .5), (.5, .5), (1, 0), (1, .5), (.5, 1), (1, 1), (1, 1)]


def test_elo_interval_and_los_of_known_pairs() -> None:
    st = match.summarize(games_of_pairs(TEN_PAIRS), "a")
    assert (st.games, st.wins, st.losses, st.draws) == (20, 7, 5, 8)
    assert st.penta == [1, 2, 3, 2, 2]
    # Pair scores 0, 1/4, 1/2, 3/4, 1: mean (0 + 2/4 + 3/2 + 6/4 + 2) / 10 = 0.55.
    assert st.score == pytest.approx(0.55)
    # Squared deviations .3025 + 2 x .09 + 3 x .0025 + 2 x .04 + 2 x .2025 = .975;
    # se = sqrt(.975 / 9 / 10) = .1040833; 95%: .55 -+ .2040033.
    # Elo = -400 log10(1/p - 1): p = .55 -> +34.86, .3459967 -> -110.60, .7540033 -> +194.58.
    assert st.elo == pytest.approx(34.860, abs=1e-3)
    assert st.elo_lo == pytest.approx(-110.603, abs=1e-3)
    assert st.elo_hi == pytest.approx(194.578, abs=1e-3)
    # LOS = Phi(.05 / .1040833) = Phi(.48039) = .68452.
    assert st.los == pytest.approx(0.68452, abs=1e-5)


def test_an_unfinished_pair_counts_as_games_but_not_in_the_pentanomial() -> None:
    results = games_of_pairs(TEN_PAIRS) + [game(20, 1.0)]
    st = match.summarize(results, "a")
    assert (st.games, st.wins) == (21, 8) and st.penta == [1, 2, 3, 2, 2]
    assert st.score == pytest.approx(12 / 21)


def test_sprt_llr_by_hand_and_as_the_shared_runner_printed() -> None:
    # [1, 2, 3, 2, 2] at [0, 10]: m = .55, v = .975 / 10 = .0975 (population),
    # s0 = .5, s1 = 1 / (1 + 10^(-10/400)) = .5143872;
    # LLR = 10 (s1 - s0) (2m - s0 - s1) / (2v) = 10 x .0143872 x .0856128 / .195 = .0631655.
    assert sprt_llr([1, 2, 3, 2, 2], 0, 10) == pytest.approx(0.0631655, abs=1e-7)
    # The shared runner's sprt_llr on the same counts gave these, to the last bit.
    shared = {((7, 13, 31, 28, 21), 0, 15): 2.481812746746346,
              ((15, 20, 68, 34, 49), 0, 10): 2.9959701966954166,
              ((3, 0, 1, 0, 0), -5, 5): -0.4604852293792874,
              ((0, 5, 0, 5, 0), 0, 5): -0.004141536063994041,
              ((1, 2, 3, 2, 2), -10, 0): 0.08439535819621684,
              ((0, 0, 9, 0, 0), 0, 5): 0.0}
    for (penta, elo0, elo1), llr in shared.items():
        assert sprt_llr(list(penta), elo0, elo1) == llr
    # Wald's bounds at alpha = beta = .05: ln(.05 / .95) and ln(.95 / .05).
    assert sprt_bounds(0.05, 0.05) == pytest.approx((-2.944439, 2.944439), abs=1e-6)
    assert match.sprt_verdict(3.0, -2.94, 2.94) == "H1 accepted"
    assert match.sprt_verdict(-3.0, -2.94, 2.94) == "H0 accepted"
    assert match.sprt_verdict(0.5, -2.94, 2.94) == ""


# --- the runner -----------------------------------------------------------------------

def dummy_jobs(count: int) -> list[Job]:
    spec = match.EngineSpec("x", ["x"])
    return [Job(n, n // 2, spec, spec, chess.Board()) for n in range(count)]


@pytest.mark.parametrize("concurrency", [1, 2])
def test_a_decision_stops_the_pending_games(concurrency: int) -> None:
    played: list[int] = []

    def play(job: Job) -> GameResult:
        played.append(job.number)
        return game(job.number, 1.0)

    results = match.run_games(dummy_jobs(40), play, concurrency, lambda results: len(results) >= 6)
    # Nothing starts after the 6th result; with two threads the other game in play finishes and counts.
    assert len(results) == len(played)
    assert len(played) == 6 if concurrency == 1 else 6 <= len(played) <= 7
    assert sorted(played) == list(range(len(played)))


def test_a_second_interrupt_keeps_the_games_played(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture) -> None:
    # Ctrl-C, then Ctrl-C again while the game in play finishes: the runner
    # still returns what was played (for the summary), and no game starts after.
    noted = threading.Event()

    def still_finishing(signum: int, frame: object) -> None:
        original(signum, frame)
        noted.set()

    original = match._still_finishing
    monkeypatch.setattr(match, "_still_finishing", still_finishing)
    waiting = threading.Event()  # the runner waits for its games (all workers started)
    wait = match.cf.wait

    def waits(*args: object, **kwargs: object) -> object:
        waiting.set()
        return wait(*args, **kwargs)

    monkeypatch.setattr(match.cf, "wait", waits)

    def play(job: Job) -> GameResult:
        if job.number == 0:
            assert waiting.wait(10)
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # until the runner has taken the first one
                if signal.getsignal(signal.SIGINT) is still_finishing:
                    break
                threading.Event().wait(0.01)
            os.kill(os.getpid(), signal.SIGINT)
            assert noted.wait(10)
        return game(job.number, 1.0)

    # Python's own handler, as in a terminal: a suite started in the background
    # by a non-interactive shell inherits SIGINT ignored (as `match.main` knows).
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        results = match.run_games(dummy_jobs(10), play, 1, lambda results: False)
        restored = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert [result.number for result in results] == [0]
    assert restored is signal.default_int_handler  # the runner put back the handler it found
    err = capsys.readouterr().err
    assert "interrupted: finishing the games in play" in err and "still finishing" in err


def test_a_terminals_ctrl_c_reaches_the_runner_not_its_engines() -> None:
    # Ctrl-C in a terminal signals the whole foreground process group.  The
    # runner then finishes the games in play, which needs its engines alive:
    # they start in their own group (the fake engine dies of a SIGINT).
    script = textwrap.dedent(f"""
        import os, signal, sys, time
        from tools.common import open_engine
        signal.signal(signal.SIGINT, lambda signum, frame: None)  # (SIG_IGN would be inherited)
        engine = open_engine([sys.executable, {str(FAKE)!r}, "legal"])
        os.killpg(0, signal.SIGINT)
        time.sleep(0.5)
        engine.ping()
        engine.quit()
        print("alive")
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, start_new_session=True,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "alive", done.stderr


def test_an_engine_ends_with_its_runner_though_outside_its_process_group() -> None:
    # Killed outright, the runner closes nothing itself: the engine's input
    # closes with it, and an engine that reads to the end of it quits.
    script = textwrap.dedent(f"""
        import sys, time
        from tools.common import open_engine
        engine = open_engine([sys.executable, {str(FAKE)!r}, "legal"])
        print(engine.protocol.transport.get_pid(), flush=True)
        time.sleep(60)
    """)
    runner = subprocess.Popen([sys.executable, "-c", script], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True)
    assert runner.stdout is not None
    pid = int(runner.stdout.readline())
    runner.kill()
    runner.wait(10)
    for _ in range(500):  # until the engine has gone (a zombie's /proc entry says Z; it has no parent here to reap it)
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().split(") ")[1].startswith("Z"):
                    break
        except FileNotFoundError:
            break
        threading.Event().wait(0.02)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the engine outlived its runner")


def test_sprt_decides_and_the_match_stops(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    # Pairs cycle DD, WD, WW: mean .75, clearly above [0, 10]: H1 within a few dozen pairs.
    cycle = [(.5, .5), (1, .5), (1, 1)]
    played: list[int] = []

    def scripted(job: Job, args: object) -> GameResult:
        played.append(job.number)
        return game(job.number, cycle[job.pair % 3][job.number % 2])

    monkeypatch.setattr(match, "play_game", scripted)
    rc = match.main(["--engine", "a=none", "--engine", "b=none", "--nodes", "1", "--games", "400",
                     "--sprt", "0", "10", "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "H1 accepted" in out
    games = int(re.search(r"games (\d+),", out).group(1))
    assert games == len(played) < 400
    llr = float(re.search(r"LLR ([+-][\d.]+)", out).group(1))
    assert llr >= 2.94


def test_each_game_line_names_its_opening_for_paired(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture) -> None:
    # The lines a match prints without --quiet are what tools/paired.py reads
    # back: the game's pair must be there (games finish out of order above
    # --concurrency 1), and printing it must not break the match (session 36
    # named a field GameResult lacks: every match without --quiet crashed).
    def scripted(job: Job, args: object) -> GameResult:
        return game(job.number, 1.0 if job.pair == 1 else 0.5)

    monkeypatch.setattr(match, "play_game", scripted)
    rc = match.main(["--engine", "a=none", "--engine", "b=none", "--nodes", "1", "--games", "6", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 0
    lines = [line for line in err.splitlines() if line.startswith("[")]
    assert len(lines) == 6 and all(re.search(r", opening [1-3]  \|", line) for line in lines)
    assert paired.pair_scores(err, "a") == {1: 1.0, 2: 2.0, 3: 1.0}


def test_a_continued_sprt_decides_on_the_pooled_counts(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture) -> None:
    # Session 19's net SPRT ended at LLR +3.00 on these pairs: continued, the
    # first game (its pair unfinished, so the counts unchanged) already decides.
    prior = [15, 20, 68, 34, 49]
    played: list[int] = []

    def scripted(job: Job, args: object) -> GameResult:
        played.append(job.number)
        return game(job.number, 0.5)

    monkeypatch.setattr(match, "play_game", scripted)
    rc = match.main(["--engine", "a=none", "--engine", "b=none", "--nodes", "1", "--games", "400",
                     "--sprt", "0", "10", "--prior-penta", ",".join(map(str, prior)), "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0 and "H1 accepted" in out
    assert played == [0]
    assert float(re.search(r"LLR ([+-][\d.]+)", out).group(1)) == pytest.approx(sprt_llr(prior, 0, 10), abs=0.005)
    assert "pooled with --prior-penta: pairs 186, pentanomial [15, 20, 68, 34, 49]" in out
    assert match.parse_penta("[1, 2, 3, 2, 2]") == [1, 2, 3, 2, 2]
    for bad in ("1,2,3", "1,2,3,4,x", "1,2,3,4,-1"):
        with pytest.raises(SystemExit):
            match.build_parser().parse_args(["--engine", "a=x", "--engine", "b=y", "--nodes", "1",
                                             "--prior-penta", bad])


def test_a_continued_sprt_prints_the_pooled_counts_a_next_part_takes(monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture) -> None:
    """A part's progress lines show this part's counts and, beside the LLR, the pooled ones it is of."""
    monkeypatch.setattr(match, "play_game", lambda job, args: game(job.number, 0.5))
    match.main(["--engine", "a=none", "--engine", "b=none", "--nodes", "1", "--games", "2",
                "--sprt", "-10", "0", "--prior-penta", "5,5,5,5,5", "--no-progress"])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "pentanomial [0, 0, 1, 0, 0]" in last and last.endswith("pooled [5, 5, 6, 5, 5]"), last


def test_each_game_reaches_the_pgn_file_as_it_ends(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A run killed before its summary keeps the games played; the end rewrites the file in game order."""
    pgn = tmp_path / "games.pgn"
    seen: list[str] = []

    def play(job: Job, args: object) -> GameResult:
        seen.append(pgn.read_text())
        return dataclasses.replace(game(job.number, 1.0), pgn=f'[Event "game {job.number}"]')

    monkeypatch.setattr(match, "play_game", play)
    match.main(["--engine", "a=none", "--engine", "b=none", "--nodes", "1", "--games", "3", "--concurrency", "1",
                "--pgn", str(pgn), "--no-progress", "--quiet"])
    assert [text.count("[Event ") for text in seen] == [0, 1, 2]
    assert [line for line in pgn.read_text().splitlines() if line] == [f'[Event "game {n}"]' for n in range(3)]


def test_a_game_line_names_its_faults(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """A run cut short prints no summary: each game's line says whether someone crashed, moved illegally or lost on time."""
    def play(job: Job, args: object) -> GameResult:
        faults = [Fault("b", "crash", "engine process died")] if job.number == 1 else []
        return dataclasses.replace(game(job.number, 1.0), faults=faults)

    monkeypatch.setattr(match, "play_game", play)
    match.main(["--engine", "a=none", "--engine", "b=none", "--nodes", "1", "--games", "2", "--concurrency", "1",
                "--no-progress"])
    first, second = capsys.readouterr().err.strip().splitlines()[-2:]
    assert "FAULT" not in first and second.endswith("FAULT b crash: engine process died"), (first, second)


def test_the_default_openings_are_the_repositorys_whatever_the_cwd(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    args = match.build_parser().parse_args(["--engine", "a=x", "--engine", "b=y", "--nodes", "1"])
    assert Path(args.openings) == DEFAULT_OPENINGS == REPO_ROOT / "data" / "openings.epd"
    assert DEFAULT_OPENINGS.is_file()


def run_match(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str]:
    rc = match.main(argv + ["--quiet"])
    return rc, capsys.readouterr().out


def test_pawnstorm_against_itself_at_a_few_nodes(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    engine = f"{PYTHON} -m uci_engine"
    pgn = tmp_path / "games.pgn"
    rc, out = run_match(["--engine", f"a={engine}", "--engine", f"b={engine}", "--option", "a.OwnBook=false",
                         "--option", "b.OwnBook=false", "--nodes", "40", "--games", "4", "--concurrency", "2",
                         "--max-plies", "60", "--resign-score", "300", "--resign-moves", "2",
                         "--seed", "3", "--pgn", str(pgn)], capsys)
    assert rc == 0, out
    head = re.search(r"a vs b: games (\d+), \+(\d+) -(\d+) =(\d+), score ([\d.]+)%, pentanomial \[([\d, ]+)\]", out)
    assert head, out
    games, wins, losses, draws = (int(head.group(i)) for i in range(1, 5))
    penta = [int(x) for x in head.group(6).split(",")]
    assert games == 4 and wins + losses + draws == 4
    assert sum(penta) == 2
    assert sum(k * count for k, count in enumerate(penta)) == 2 * wins + draws  # half-points agree
    assert float(head.group(5)) == pytest.approx((wins + draws / 2) / 4 * 100, abs=0.05)
    assert "faults: 0" in out and re.search(r"Elo a - b: [+-][\d.]+ \[", out)
    text = pgn.read_text()
    assert text.count("[Result ") == 4 and text.count('[SetUp "1"]') == 4
    # Every move carries its mover's score; at fixed nodes no time is written.
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    nodes = list(game.mainline())
    assert nodes and all(node.eval() is not None and node.clock() is None for node in nodes), text


@pytest.mark.parametrize("mode, kind, extra", [
    ("crash", "crash", ["--nodes", "1"]),
    ("dead", "crash", ["--nodes", "1"]),
    ("illegal", "illegal", ["--nodes", "1"]),
    ("stall", "stall", ["--nodes", "1", "--move-timeout", "1.5"]),
    ("slow", "time", ["--tc", "1"]),
])
def test_a_faulty_engine_loses_and_is_counted(mode: str, kind: str, extra: list[str],
                                              capsys: pytest.CaptureFixture) -> None:
    rc, out = run_match(["--engine", f"good={fake('legal')}", "--engine", f"bad={fake(mode)}",
                         "--games", "2"] + extra, capsys)
    assert rc == 1
    assert "good vs bad: games 2, +2 -0 =0" in out, out
    assert f"faults: 2 ({kind} 2)" in out, out
    assert out.count(f"bad {kind}: ") == 2


def test_moves_to_go_and_ponder_reach_the_engines(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "uci.log"
    monkeypatch.setenv("FAKE_UCI_LOG", str(log))
    rc, out = run_match(["--engine", f"a={fake('legal')}", "--engine", f"b={fake('legal')}", "--tc", "3/10",
                         "--ponder", "--games", "2", "--max-plies", "16"], capsys)
    assert rc == 0 and "faults: 0" in out
    sent = log.read_text().splitlines()
    gos = [line for line in sent if line.startswith("go")]
    assert gos[0].endswith("movestogo 3")
    assert any(line.endswith("movestogo 1") for line in gos)
    assert any(line.startswith("go ponder") for line in gos) and "ponderhit" in sent


def xboard_fake(mode: str) -> str:
    return f"{PYTHON} {shlex.quote(str(REPO_ROOT / 'tests' / 'fake_xboard.py'))} {mode}"


def test_an_xboard_engine_plays_a_uci_engine_on_the_clock(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    pgn = tmp_path / "games.pgn"
    rc, out = run_match(["--engine", f"uci={fake('legal')}", "--engine", f"cecp={xboard_fake('legal')}",
                         "--xboard", "cecp", "--tc", "5+0.05", "--games", "2", "--max-plies", "30",
                         "--pgn", str(pgn)], capsys)
    assert rc == 0, out
    assert "uci vs cecp: games 2, " in out and "faults: 0" in out, out
    games = pgn.read_text()
    assert '[White "cecp"]' in games and '[Black "cecp"]' in games
    stream = io.StringIO(games)
    for _ in range(2):
        game = chess.pgn.read_game(stream)
        assert game is not None and len(list(game.mainline_moves())) >= 10, games  # both sides moved, legally
        # On the clock every move carries its think time and the clock left after it.
        for node in game.mainline():
            assert node.emt() is not None and 0 <= node.clock() <= 5 + 0.05 * len(list(game.mainline_moves()))


def test_an_xboard_engine_is_told_the_time_control_once_a_game(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # `level` starts a control (under MOVES/ its period too); each move then
    # brings only the clocks (`time`, `otim`), as xboard itself sends them.
    log = tmp_path / "xboard.log"
    monkeypatch.setenv("FAKE_XBOARD_LOG", str(log))
    rc, out = run_match(["--engine", f"uci={fake('legal')}", "--engine", f"cecp={xboard_fake('legal')}",
                         "--xboard", "cecp", "--tc", "40/5", "--games", "2", "--max-plies", "30"], capsys)
    assert rc == 0 and "faults: 0" in out, out
    sent = log.read_text().splitlines()
    levels = [line for line in sent if line.startswith("level")]
    assert levels == ["level 40 0:05 0"] * 2, levels
    gos = sum(line == "go" for line in sent)
    assert gos >= 4 and sum(line.startswith("time ") for line in sent) == gos  # the clocks before every move


def test_an_xboard_resignation_is_a_loss_and_no_fault(capsys: pytest.CaptureFixture) -> None:
    rc, out = run_match(["--engine", f"uci={fake('legal')}", "--engine", f"quitter={xboard_fake('resign')}",
                         "--xboard", "quitter", "--nodes", "1", "--games", "2"], capsys)
    assert rc == 0, out
    assert "uci vs quitter: games 2, +2 -0 =0" in out and "faults: 0" in out, out


def test_an_illegal_xboard_move_is_an_illegal_move_fault(capsys: pytest.CaptureFixture) -> None:
    rc, out = run_match(["--engine", f"uci={fake('legal')}", "--engine", f"bad={xboard_fake('illegal')}",
                         "--xboard", "bad", "--nodes", "1", "--games", "2"], capsys)
    assert rc == 1
    assert "uci vs bad: games 2, +2 -0 =0" in out and "faults: 2 (illegal 2)" in out, out


def test_xboard_names_an_engine_of_the_match(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exited:
        match.main(["--engine", f"a={fake('legal')}", "--engine", f"b={fake('legal')}", "--xboard", "c",
                    "--nodes", "1"])
    assert exited.value.code == 2
    assert "--xboard c: no engine named c" in capsys.readouterr().err


# --- suites ---------------------------------------------------------------------------

def test_suite_runs_pawnstorm_on_wac(capsys: pytest.CaptureFixture) -> None:
    wac = REPO_ROOT / "data" / "suites" / "wac.epd"
    assert suite.main(["--engine", f"{PYTHON} -m uci_engine", "--option", "OwnBook=false",
                       "--suite", str(wac), "--nodes", "500", "--limit", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    solved, total = map(int, re.fullmatch(r"solved (\d+)/(\d+)", lines[-1]).groups())
    assert total == 3 and solved == 3 - sum(line.startswith("miss WAC.") for line in lines)


def test_suite_counts_bm_and_am() -> None:
    board = chess.Board()
    e4, d4 = chess.Move.from_uci("e2e4"), chess.Move.from_uci("d2d4")
    assert suite.solved(e4, {"bm": [e4]}) and not suite.solved(d4, {"bm": [e4]})
    assert suite.solved(d4, {"am": [e4]}) and not suite.solved(e4, {"am": [e4]})
    assert suite.wanted(board, {"am": [e4]}) == "am e4"


# --- the docs need nothing beside the repository --------------------------------------

def test_readme_and_docs_point_at_nothing_outside_the_repository() -> None:
    pages = [REPO_ROOT / "README.md", REPO_ROOT / "data" / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
    offenders = [f"{page.name}:{n}" for page in pages
                 for n, line in enumerate(page.read_text().splitlines(), 1) if "../shared" in line]
    assert not offenders
