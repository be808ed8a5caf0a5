#!/usr/bin/env python3
"""Play a match between two engines (UCI, or xboard with --xboard) and report the Elo difference.

A small, dependency-light match runner built on python-chess's UCI client
(the same client many tools and GUIs are tested against). It exists so that
strength can be measured on any machine of this project without a separate
tournament manager; where cutechess-cli or fastchess is installed, those are
the standard and give the same kind of numbers.

Each opening is played twice with colours swapped, so the result is reported
per game pair (pentanomial) as well as per game: W/L/D, pentanomial counts,
Elo with a 95% interval (from the pair variance), and every fault (crash,
illegal move, time loss, stall: see match_game.py).  The openings are
data/openings.epd unless --openings names another EPD file ("" plays every
game from the initial position); they are shuffled by --seed.

Examples (from the repository's root; engine commands are run as given):
  python -m tools.match --engine "new=.venv/bin/pawnstorm" --engine "sf=/usr/games/stockfish" \\
         --option sf.UCI_LimitStrength=true --option sf.UCI_Elo=1800 --tc 10+0.1 --games 40
  python -m tools.match --engine "a=./a" --engine "b=./b" --nodes 20000 --games 100
  python -m tools.match --engine "new=..." --engine "old=..." --tc 5+0.05 --games 4000 \\
         --sprt 0 10 --concurrency 2          # stops as soon as the test decides

An engine that speaks xboard (CECP) rather than UCI is named with
--xboard NAME (python-chess speaks both; its options are then the
engine's `feature option=` ones, and it may resign):
  python -m tools.match --engine "new=.venv/bin/pawnstorm" --engine "phalanx=/usr/games/phalanx -b- -l-" \\
         --xboard phalanx --tc 10+0.1 --games 100

Limits: --tc BASE+INC (seconds, e.g. 10+0.1) or MOVES/BASE[+INC] (e.g. 40/5:
40 moves in 5 s, the clock topped up every 40 moves, `movestogo` in every
`go`); or a fixed --nodes, --depth or --movetime per move.  --ponder lets
the engines think on the opponent's time (`go ponder`, `ponderhit`).

--sprt ELO0 ELO1 runs a sequential probability ratio test on the game pairs
(logistic Elo of the first engine over the second, alpha = beta = 0.05
unless --sprt-alpha/--sprt-beta): once it decides, no further game starts
and the games already running finish and count; --games is then the
maximum.  Its log-likelihood ratio is common.sprt_llr, the same as the
team's earlier shared runner, so tools/elo.py can pool runs of either.
A test cut short (a session's end) goes on in a new run with
--prior-penta and the counts of the old one's last line, and another --seed.

--cluster ADDRESS plays the game pairs as tasks on a Dask distributed
cluster instead of --concurrency local threads (tools/match_cluster.py,
docs/cluster.md): one task per pair, the same games and the same report,
plus a last line with the pairs played and cancelled.  Every worker must
start both engine commands as given (the openings travel with the tasks);
an SPRT that decides cancels the pairs not yet begun.  Needs the `cluster`
extra; without --cluster, Dask is never imported.

A progress bar is drawn on stderr when it is a terminal (--progress /
--no-progress force it); each finished game is also listed there unless
--quiet, with the running counts and pentanomial (and the faults of that
game, if any), so that a run cut short can still be pooled with
tools/elo.py; --pgn gets each game as it ends, then the file in game
order.  Ctrl-C stops starting games, lets the running ones finish and
reports what was played.

Exit status: 0 when the match ran; 1 when an engine faulted (the counts are
printed either way); 2 when the cluster cannot play it (a worker refused,
named with what it lacks; no scheduler or worker).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import logging
import math
import random
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import chess
from tqdm import tqdm

from tools.common import DEFAULT_OPENINGS, elo, elo_text, load_openings, pentanomial, sprt_bounds, sprt_llr, wilson
from tools.cluster import CONNECT_TIMEOUT, address_problem
from tools.match_game import FAULT_KINDS, RULE_DEFAULTS, EngineSpec, Fault, GameResult, Job, parse_engine, play_game

#: A game's points for White.
WHITE_POINTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


# --- statistics -------------------------------------------------------------------

@dataclass(frozen=True)
class Summary:
    """The first engine's view of the games so far."""

    games: int
    wins: int
    losses: int
    draws: int
    score: float  # mean points per game
    penta: list[int]  # complete pairs scoring 0, 1/2, 1, 3/2, 2 points: [LL, LD, DD/WL, WD, WW]
    elo: float
    elo_lo: float  # 95% interval
    elo_hi: float
    los: float  # likelihood of superiority
    score_lo: float  # the score's 95% interval (Wilson's where the variance is zero)
    score_hi: float


def points_of(results: Iterable[GameResult], name: str) -> list[tuple[int, float]]:
    """(pair, points) of every game for the engine called `name`."""
    out = []
    for r in results:
        white = WHITE_POINTS.get(r.result, 0.5)
        out.append((r.opening, white if r.white == name else 1 - white))
    return out


def pentanomial_counts(points: Sequence[tuple[int, float]]) -> list[int]:
    """Counts of the complete pairs by their points (0, 1/2, ..., 2); a pair missing a game is left out."""
    pairs: dict[int, list[float]] = {}
    for pair, pts in points:
        pairs.setdefault(pair, []).append(pts)
    penta = [0] * 5
    for both in pairs.values():
        if len(both) == 2:
            penta[round(sum(both) * 2)] += 1
    return penta


def summarize(results: Sequence[GameResult], name_a: str) -> Summary:
    """W/L/D, score and Elo of engine `name_a`.

    The interval comes from the pair variance (pentanomial) once two pairs are
    complete, as colour-swapped pairs are correlated; before that from the
    per-game variance; where that variance is zero (every game won, lost or
    drawn) or the interval runs past a score of 0 or 1 (7 wins and a draw),
    from Wilson's interval of the game score, which has a width and stays
    within the possible scores.
    """
    points = points_of(results, name_a)
    pts = [p for _, p in points]
    n = len(pts)
    wins, losses = pts.count(1.0), pts.count(0.0)
    mean = sum(pts) / n if n else 0.5
    penta = pentanomial_counts(points)
    if sum(penta) >= 2:
        se = pentanomial(penta)[2]
    else:
        se = math.sqrt(sum((x - mean) ** 2 for x in pts) / max(1, n - 1) / max(1, n))
    if se > 0:
        los = 0.5 * (1 + math.erf((mean - 0.5) / (se * math.sqrt(2))))
    else:
        los = 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    low, high = mean - 1.96 * se, mean + 1.96 * se
    if se <= 0 or low < 0 or high > 1:  # the normal interval has no width or leaves the possible scores
        low, high = wilson(mean, n)
    return Summary(n, wins, losses, n - wins - losses, mean, penta, elo(mean), elo(low), elo(high), los, low, high)


def sprt_verdict(llr: float, lower: float, upper: float) -> str:
    """"H1 accepted", "H0 accepted" or "" while the LLR lies between the bounds."""
    return "H1 accepted" if llr >= upper else "H0 accepted" if llr <= lower else ""


# --- running games ----------------------------------------------------------------

def run_games(jobs: Sequence[Job], play: Callable[[Job], GameResult], concurrency: int,
              after_game: Callable[[list[GameResult]], bool]) -> list[GameResult]:
    """Play `jobs` in order on `concurrency` threads; the results in the order they finished.

    `after_game(results)` runs under a lock after each game; True stops the
    match: no further game starts, those running finish and count.  The
    check sits in the worker, before it takes the next job, so that a
    decision at game N leaves exactly the games then running (with one
    thread, none) rather than racing the pool.  Ctrl-C stops the same way.
    """
    results: list[GameResult] = []
    lock = threading.Lock()
    pending = iter(jobs)
    stop = threading.Event()

    def worker() -> None:
        while True:
            with lock:
                job = None if stop.is_set() else next(pending, None)
            if job is None:
                return
            result = play(job)
            with lock:
                results.append(result)
                if after_game(results):
                    stop.set()

    with cf.ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        futures: list[cf.Future] = []
        try:  # (from the first submit: a game may be interrupted as soon as it starts)
            for _ in range(max(1, concurrency)):
                futures.append(pool.submit(worker))
            cf.wait(futures)
        except KeyboardInterrupt:
            stop.set()
            # A second Ctrl-C must not lose the summary of the games already
            # played: it is answered with a note, and the games in play end
            # under their own clocks (kill the runner to abandon them).
            previous = signal.signal(signal.SIGINT, _still_finishing)
            print("interrupted: finishing the games in play", file=sys.stderr, flush=True)
            try:
                pool.shutdown(wait=True)  # every worker, even one whose future the interrupt kept from the list
            finally:
                signal.signal(signal.SIGINT, previous)
        for future in futures:
            future.result()  # a bug in a worker is raised here, not lost
    return results


def _still_finishing(signum: int, frame: object) -> None:
    """SIGINT while the interrupted match finishes its games in play: say so, and go on."""
    print("still finishing the games in play; the summary follows", file=sys.stderr, flush=True)


def make_jobs(a: EngineSpec, b: EngineSpec, openings: list[chess.Board], games: int) -> list[Job]:
    """`games` games, each opening twice in a row with colours swapped (`a` White first)."""
    jobs = []
    for number in range(games):
        white, black = (a, b) if number % 2 == 0 else (b, a)
        jobs.append(Job(number, number // 2, white, black, openings[(number // 2) % len(openings)]))
    return jobs


# --- command line -----------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", action="append", required=True, help="NAME=COMMAND (twice)")
    ap.add_argument("--option", action="append", default=[], help="NAME.Option=value")
    ap.add_argument("--xboard", action="append", default=[], metavar="NAME",
                    help="the engine called NAME speaks xboard (CECP), not UCI")
    ap.add_argument("--tc", help="time control BASE+INC in seconds, e.g. 10+0.1, or MOVES/BASE[+INC], e.g. 40/5")
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--depth", type=int)
    ap.add_argument("--movetime", type=float, help="seconds per move")
    ap.add_argument("--ponder", action="store_true", help="let the engines ponder on the opponent's time")
    ap.add_argument("--games", type=int, default=20, help="games to play (the most, with --sprt)")
    ap.add_argument("--openings", default=str(DEFAULT_OPENINGS),
                    help="EPD file of start positions, each played with both colours "
                         "(default: the repository's data/openings.epd; \"\": the initial position)")
    ap.add_argument("--seed", type=int, default=1, help="shuffles the openings")
    ap.add_argument("--concurrency", type=int, default=1, help="games played at once (locally; not with --cluster)")
    ap.add_argument("--cluster", metavar="ADDRESS",
                    help="play each game pair as a task on a Dask cluster: its scheduler's address "
                         f"(tcp://host:8786) or scheduler file; an unreachable one is given up after "
                         f"{CONNECT_TIMEOUT:.0f} s; needs the `cluster` extra (docs/cluster.md)")
    ap.add_argument("--pgn", help="write all games to this PGN file")
    ap.add_argument("--max-plies", type=int, default=RULE_DEFAULTS["max_plies"])
    ap.add_argument("--time-margin", type=float, default=RULE_DEFAULTS["time_margin"],
                    help="seconds an engine may overrun its clock before it loses on time")
    ap.add_argument("--start-timeout", type=float, default=RULE_DEFAULTS["start_timeout"])
    ap.add_argument("--move-timeout", type=float, default=RULE_DEFAULTS["move_timeout"],
                    help="seconds to wait for a move without a clock before calling it a stall")
    ap.add_argument("--resign-score", type=int, default=RULE_DEFAULTS["resign_score"],
                    help="0 disables resign adjudication")
    ap.add_argument("--resign-moves", type=int, default=RULE_DEFAULTS["resign_moves"])
    ap.add_argument("--draw-score", type=int, default=RULE_DEFAULTS["draw_score"])
    ap.add_argument("--draw-moves", type=int, default=RULE_DEFAULTS["draw_moves"])
    ap.add_argument("--draw-after", type=int, default=RULE_DEFAULTS["draw_after"])
    ap.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"),
                    help="stop as soon as a sequential test decides between ELO0 and ELO1 "
                         "(logistic Elo of the first engine over the second); --games is then the maximum")
    ap.add_argument("--prior-penta", type=parse_penta, metavar="LL,LD,DD,WD,WW",
                    help="pair counts of all the earlier runs of the same test that this run continues "
                         "(the first run's report or last progress line; a continued run's 'pooled' "
                         "counts): the SPRT decides on the sum, and the report adds a pooled line; "
                         "give this run another --seed")
    ap.add_argument("--sprt-alpha", type=float, default=0.05)
    ap.add_argument("--sprt-beta", type=float, default=0.05)
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="draw a progress bar on stderr (default: only on a terminal)")
    ap.add_argument("--quiet", action="store_true", help="no line per finished game")
    ap.set_defaults(node_jitter=RULE_DEFAULTS["node_jitter"], own_book=RULE_DEFAULTS["own_book"])  # rules with no flag
    return ap


def parse_penta(text: str) -> list[int]:
    """Five comma-separated pair counts, as match.py prints them ("[1, 2, 3, 2, 2]" also reads)."""
    try:
        counts = [int(x) for x in text.strip().strip("[]").split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not five integers: {text!r}") from None
    if len(counts) != 5 or min(counts) < 0:
        raise argparse.ArgumentTypeError(f"not five counts of at least 0: {text!r}")
    return counts


def pooled_penta(penta: list[int], prior: list[int] | None) -> list[int]:
    """This run's pair counts plus an earlier run's (`--prior-penta`)."""
    return [x + y for x, y in zip(penta, prior)] if prior else list(penta)


def engines_from(args: argparse.Namespace, ap: argparse.ArgumentParser) -> tuple[EngineSpec, EngineSpec]:
    """The two engines with their options; the second renamed NAME-2 when both have one name."""
    if len(args.engine) != 2:
        ap.error("give exactly two --engine")
    a, b = (parse_engine(e) for e in args.engine)
    if a.name == b.name:
        b.name += "-2"
    by_name = {a.name: a, b.name: b}
    for opt in args.option:
        key, _, value = opt.partition("=")
        ename, _, oname = key.partition(".")
        spec = by_name.get(ename)
        if spec is None:
            ap.error(f"--option {opt}: no engine named {ename}")
        spec.options[oname] = value
    for name in args.xboard:
        spec = by_name.get(name)
        if spec is None:
            ap.error(f"--xboard {name}: no engine named {name}")
        spec.protocol = "xboard"
    return a, b


def report(a: str, b: str, st: Summary, faults: list[tuple[int, Fault]], seconds: float,
           sprt: str | None) -> None:
    """The result lines on stdout (the format docs/ quotes)."""
    print(f"{a} vs {b}: games {st.games}, +{st.wins} -{st.losses} ={st.draws}, "
          f"score {st.score * 100:.1f}%, pentanomial {st.penta}")
    kinds = [f.kind for _, f in faults]
    by_kind = ", ".join(f"{k} {kinds.count(k)}" for k in FAULT_KINDS if k in kinds)
    print(f"faults: {len(faults)}" + (f" ({by_kind})" if by_kind else "")
          + "".join(f"\n  pair {pair}: {f.engine} {f}" for pair, f in faults))
    print(f"time: {seconds:.0f}s")
    print(f"Elo {a} - {b}: {elo_text(st.score, st.score_lo, st.score_hi)}, LOS {st.los * 100:.1f}%")
    if sprt:
        print(sprt)


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    # A match started in the background by a non-interactive shell inherits
    # SIGINT ignored; restore Python's handler so that `kill -INT` still
    # stops it after the games in play (the pairs already played are kept).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # xboard engines chat (`tellics`, their own notes), which python-chess
    # logs line by line as unexpected; faults are counted and reported here.
    logging.getLogger("chess.engine").setLevel(logging.ERROR)
    if not (args.tc or args.nodes or args.depth or args.movetime):
        ap.error("give --tc, --nodes, --depth or --movetime")
    if args.cluster and (problem := address_problem(args.cluster)) is not None:
        print(f"match: {problem}", file=sys.stderr)
        return 2
    a, b = engines_from(args, ap)
    openings = load_openings(args.openings)
    random.Random(args.seed).shuffle(openings)
    lower, upper = sprt_bounds(args.sprt_alpha, args.sprt_beta)
    bar = tqdm(total=args.games, unit="game", file=sys.stderr,
               disable=None if args.progress is None else not args.progress)
    decided = ""  # the SPRT's verdict when it stopped the match
    # Each game goes to the PGN file as it ends, so that a run killed
    # before its summary (a machine taken away) keeps its games; the file is
    # rewritten in game order at the end.
    pgn_file = open(args.pgn, "w") if args.pgn else None

    def after_game(results: list[GameResult]) -> bool:
        nonlocal decided
        r = results[-1]
        if pgn_file is not None:
            pgn_file.write(r.pgn + "\n\n")
            pgn_file.flush()
        st = summarize(results, a.name)
        pooled = pooled_penta(st.penta, args.prior_penta)
        llr = sprt_llr(pooled, *args.sprt) if args.sprt else 0.0
        sprt_text = f"  LLR {llr:+.2f} [{lower:.2f}, {upper:.2f}]" if args.sprt else ""
        if args.prior_penta:  # what the LLR is of, and what a next part's --prior-penta takes
            sprt_text += f" pooled {pooled}"
        bar.update()
        bar.set_postfix_str(f"+{st.wins} -{st.losses} ={st.draws}" + sprt_text, refresh=False)
        if not args.quiet:
            bar.write(f"[{len(results)}/{args.games}] {r.white} vs {r.black}: {r.result} ({r.reason}), opening {r.opening + 1}"
                      f"  | {a.name} {st.wins}W {st.losses}L {st.draws}D pentanomial {st.penta}" + sprt_text
                      + "".join(f"  FAULT {f.engine} {f}" for f in r.faults), file=sys.stderr)
        if args.sprt and not decided:
            decided = sprt_verdict(llr, lower, upper)
        return bool(decided)

    t0 = time.time()
    jobs = make_jobs(a, b, openings, args.games)
    cluster_line = ""
    if args.cluster:
        from tools import match_cluster  # only now: a local match never imports Dask
        try:
            results, outcome = match_cluster.play(args.cluster, jobs, args, after_game)
        except match_cluster.ClusterError as error:
            bar.close()
            if pgn_file is not None:
                pgn_file.close()
            print(f"match: {error}", file=sys.stderr)
            return 2
        cluster_line = str(outcome)
    else:
        results = run_games(jobs, lambda job: play_game(job, args), args.concurrency, after_game)
    bar.close()
    results.sort(key=lambda r: r.number)
    if pgn_file is not None:
        pgn_file.seek(0)
        pgn_file.truncate()
        pgn_file.writelines(r.pgn + "\n\n" for r in results)
        pgn_file.close()
    st = summarize(results, a.name)
    faults = [(r.opening, f) for r in results for f in r.faults]
    sprt = None
    if args.sprt:
        llr = sprt_llr(pooled_penta(st.penta, args.prior_penta), *args.sprt)
        verdict = decided or "no decision within --games"
        sprt = (f"SPRT [{args.sprt[0]:g}, {args.sprt[1]:g}] alpha {args.sprt_alpha:g} beta {args.sprt_beta:g}: "
                f"LLR {llr:+.2f} [{lower:.2f}, {upper:.2f}], {verdict}")
    report(a.name, b.name, st, faults, time.time() - t0, sprt)
    total = pooled_penta(st.penta, args.prior_penta)
    if args.prior_penta and sum(total) >= 2:  # an interval needs two pairs
        pairs, mean, se = pentanomial(total)
        print(f"pooled with --prior-penta: pairs {pairs}, pentanomial {total}, "
              f"Elo {elo(mean):+.1f} [{elo(mean - 1.96 * se):+.1f}, {elo(mean + 1.96 * se):+.1f}] (95%)")
    if cluster_line:
        print(cluster_line)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
