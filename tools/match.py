#!/usr/bin/env python3
"""Play a match between two UCI engines and report the Elo difference.

A small, dependency-light match runner built on python-chess's UCI client
(the same client many tools and GUIs are tested against). It exists so that
strength can be measured on any machine of this project without a separate
tournament manager; where cutechess-cli or fastchess is installed, those are
the standard and give the same kind of numbers.

Each opening from the EPD file is played twice with colours swapped, so the
result is reported per game pair (pentanomial) as well as per game.

Examples:
  match.py --engine "new=.venv/bin/pawnstorm" --engine "sf=/usr/games/stockfish" \
           --option sf.UCI_LimitStrength=true --option sf.UCI_Elo=1800 \
           --tc 10+0.1 --games 40 --openings ../shared/openings.epd
  match.py --engine "a=./a" --engine "b=./b" --nodes 20000 --games 100

Why this copy of the shared runner (../shared/tools/match.py) exists: it
adds two things the shared one lacks, which docs/reliability.md's fault-free
games were played with:
  --tc MOVES/BASE[+INC]   a repeating moves-to-go control, e.g. 40/5 = 40 moves
                          in 5 seconds, the clock topped up every 40 moves;
                          engines get `movestogo` in every `go`.
  --ponder                engines ponder on the opponent's time (`go ponder`,
                          `ponderhit`), as python-chess's client does it.
The shared runner has --sprt (stop when a sequential test decides), which
this copy has not: use that one for SPRT runs.  Starting engines, the clock,
openings, adjudication and the Elo maths come from common.py.

Exit status: 0 when the match ran; 1 when an engine crashed, played an
illegal move or lost on time (the counts are printed either way).
"""
from __future__ import annotations

import argparse
import asyncio
import concurrent.futures as cf
import math
import random
import shlex
import sys
import threading
import time
from dataclasses import dataclass, field

import chess
import chess.engine
import chess.pgn

from common import MATE_SCORE, Clock, adjudicate, elo, load_openings, open_engine, pentanomial


#: The result when that side forfeits (crash, illegal move, time).
LOSS = {chess.WHITE: "0-1", chess.BLACK: "1-0"}


@dataclass
class EngineSpec:
    name: str
    cmd: list[str]
    options: dict[str, str] = field(default_factory=dict)


@dataclass
class GameResult:
    opening: int
    white: str
    black: str
    result: str  # "1-0", "0-1", "1/2-1/2"
    reason: str
    faults: dict[str, str]  # engine name -> "crash" | "illegal" | "time"
    pgn: str


def play_game(white: EngineSpec, black: EngineSpec, start: chess.Board, idx: int,
              args: argparse.Namespace) -> GameResult:
    specs = {chess.WHITE: white, chess.BLACK: black}
    engines: dict[bool, chess.engine.SimpleEngine] = {}
    faults: dict[str, str] = {}
    board = start.copy()
    clock = Clock(args.tc) if args.tc else None
    scores: list[int | None] = []
    hung: set[bool] = set()  # engines that stopped answering: closed, not asked to quit
    result, reason = "*", ""
    try:
        for colour, spec in specs.items():
            try:
                engines[colour] = open_engine(spec.cmd, spec.options, timeout=args.start_timeout)
            except Exception as exc:  # engine failed to start or rejected an option
                faults[spec.name] = f"crash: {exc}"
                result, reason = LOSS[colour], f"{spec.name} failed to start"
                raise StopIteration
        while True:
            outcome = board.outcome(claim_draw=True)
            if outcome is not None:
                result, reason = outcome.result(), outcome.termination.name.lower()
                break
            if board.ply() - start.ply() >= args.max_plies:
                result, reason = "1/2-1/2", "max plies"
                break
            turn = board.turn
            spec, eng = specs[turn], engines[turn]
            if clock is not None:
                limit = clock.limit(turn)
            else:
                limit = chess.engine.Limit(nodes=args.nodes, depth=args.depth, time=args.movetime)
            t0 = time.perf_counter()
            try:
                timeout = max(clock.left[turn], 0) + 5.0 if clock is not None else args.move_timeout
                play = _play(eng, board, limit, idx, timeout)
            except cf.TimeoutError:
                hung.add(turn)
                faults[spec.name] = f"time: no move within {timeout:.1f}s"
                result, reason = LOSS[turn], f"{spec.name} hung"
                break
            except Exception as exc:
                faults[spec.name] = f"crash: {exc!r}"
                result, reason = LOSS[turn], f"{spec.name} crashed"
                break
            elapsed = time.perf_counter() - t0
            if clock is not None and not clock.punch(turn, elapsed, args.time_margin):
                faults[spec.name] = f"time: {clock.left[turn]:.3f}s"
                result, reason = LOSS[turn], f"{spec.name} lost on time"
                break
            move = play.move
            if move is None or move not in board.legal_moves:
                faults[spec.name] = f"illegal: {move}"
                result, reason = LOSS[turn], f"{spec.name} illegal move {move}"
                break
            score = play.info.get("score")
            scores.append(score.pov(chess.WHITE).score(mate_score=MATE_SCORE) if score else None)
            board.push(move)
            adjudicated = adjudicate(scores, board.ply() - start.ply(), resign_score=args.resign_score,
                                     resign_plies=args.resign_moves * 2, draw_score=args.draw_score,
                                     draw_plies=args.draw_moves * 2, draw_after=args.draw_after * 2)
            if adjudicated:
                result = adjudicated
                reason = "adjudicated draw" if adjudicated == "1/2-1/2" else "adjudicated win"
                break
    except StopIteration:
        pass
    finally:
        for colour, eng in engines.items():
            try:
                eng.close() if colour in hung else eng.quit()
            except Exception:
                try:
                    eng.close()
                except Exception:
                    pass
    game = chess.pgn.Game.from_board(board)
    game.headers.update(White=white.name, Black=black.name, Result=result, Round=str(idx),
                        Termination=reason, FEN=start.fen(), SetUp="1")
    return GameResult(idx, white.name, black.name, result, reason, faults, str(game))


def _play(eng: chess.engine.SimpleEngine, board: chess.Board, limit: chess.engine.Limit, idx: int,
          timeout: float) -> chess.engine.PlayResult:
    """Ask for a move, giving up after `timeout` seconds (SimpleEngine.play waits forever on clock limits)."""
    coro = eng.protocol.play(board, limit, info=chess.engine.INFO_SCORE, game=idx, ponder=PONDER)
    return asyncio.run_coroutine_threadsafe(coro, eng.protocol.loop).result(timeout)


#: Set from --ponder: python-chess then sends `go ponder` after each move and
#: `ponderhit` or `stop` when the opponent has moved.
PONDER = False


def summarize(results: list[GameResult], name_a: str) -> dict:
    pts = []
    for r in results:
        s = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(r.result, 0.5)
        pts.append(s if r.white == name_a else 1 - s)
    n = len(pts)
    w = sum(1 for p in pts if p == 1.0)
    l = sum(1 for p in pts if p == 0.0)
    d = n - w - l
    mean = sum(pts) / n if n else 0.5
    # Pentanomial: pair results by opening (both colours).
    pairs: dict[int, list[float]] = {}
    for r, p in zip(results, pts):
        pairs.setdefault(r.opening, []).append(p)
    penta = [0] * 5
    for v in pairs.values():
        if len(v) == 2:
            penta[int(round(sum(v) * 2))] += 1
    if sum(penta) >= 2:
        se = pentanomial(penta)[2]
    else:
        var = sum((x - mean) ** 2 for x in pts) / max(1, n - 1)
        se = math.sqrt(var / max(1, n))
    lo, hi = mean - 1.96 * se, mean + 1.96 * se
    los = 0.5 * (1 + math.erf((mean - 0.5) / (se * math.sqrt(2)))) if se > 0 else (1.0 if mean > 0.5 else 0.0)
    return dict(games=n, wins=w, losses=l, draws=d, score=mean, elo=elo(mean),
                elo_lo=elo(lo), elo_hi=elo(hi), los=los, penta=penta)


def parse_engine(text: str) -> EngineSpec:
    name, sep, cmd = text.partition("=")
    if not sep:
        name, cmd = text.split("/")[-1], text
    return EngineSpec(name, shlex.split(cmd))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", action="append", required=True, help="NAME=COMMAND (twice)")
    ap.add_argument("--option", action="append", default=[], help="NAME.Option=value")
    ap.add_argument("--tc", help="time control BASE+INC in seconds, e.g. 10+0.1, or MOVES/BASE[+INC], e.g. 40/5")
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--depth", type=int)
    ap.add_argument("--movetime", type=float, help="seconds per move")
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--openings", help="EPD file of start positions (played with both colours)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--pgn", help="write all games to this PGN file")
    ap.add_argument("--max-plies", type=int, default=400)
    ap.add_argument("--time-margin", type=float, default=0.05,
                    help="seconds an engine may overrun its clock before it loses on time")
    ap.add_argument("--start-timeout", type=float, default=20.0)
    ap.add_argument("--move-timeout", type=float, default=120.0, help="seconds to wait for a move without a clock")
    ap.add_argument("--resign-score", type=int, default=700, help="0 disables resign adjudication")
    ap.add_argument("--resign-moves", type=int, default=4)
    ap.add_argument("--draw-score", type=int, default=10)
    ap.add_argument("--draw-moves", type=int, default=8)
    ap.add_argument("--draw-after", type=int, default=40)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--ponder", action="store_true", help="let the engines ponder on the opponent's time")
    args = ap.parse_args(argv)
    global PONDER
    PONDER = args.ponder
    if len(args.engine) != 2:
        ap.error("give exactly two --engine")
    if not (args.tc or args.nodes or args.depth or args.movetime):
        ap.error("give --tc, --nodes, --depth or --movetime")
    a, b = (parse_engine(e) for e in args.engine)
    if a.name == b.name:
        b.name += "-2"
    for opt in args.option:
        key, _, value = opt.partition("=")
        ename, _, oname = key.partition(".")
        spec = {a.name: a, b.name: b}.get(ename)
        if spec is None:
            ap.error(f"--option {opt}: no engine named {ename}")
        spec.options[oname] = value
    openings = load_openings(args.openings)
    random.Random(args.seed).shuffle(openings)
    jobs = []
    for g in range(args.games):
        start = openings[(g // 2) % len(openings)]
        white, black = (a, b) if g % 2 == 0 else (b, a)
        jobs.append((white, black, start, g // 2))
    results: list[GameResult] = []
    lock = threading.Lock()
    t0 = time.time()
    with cf.ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        futs = [pool.submit(play_game, w, bl, s, i, args) for (w, bl, s, i) in jobs]
        for fut in cf.as_completed(futs):
            r = fut.result()
            with lock:
                results.append(r)
                if not args.quiet:
                    st = summarize(results, a.name)
                    print(f"[{len(results)}/{args.games}] {r.white} vs {r.black}: {r.result} ({r.reason})"
                          f"  | {a.name} {st['wins']}W {st['losses']}L {st['draws']}D", file=sys.stderr, flush=True)
    if args.pgn:
        with open(args.pgn, "w") as f:
            for r in sorted(results, key=lambda r: r.opening):
                f.write(r.pgn + "\n\n")
    st = summarize(results, a.name)
    faults = [(r.opening, name, why) for r in results for name, why in r.faults.items()]
    print(f"{a.name} vs {b.name}: games {st['games']}, +{st['wins']} -{st['losses']} ={st['draws']}, "
          f"score {st['score']*100:.1f}%, pentanomial {st['penta']}")
    print(f"faults: {len(faults)}" + "".join(f"\n  pair {o}: {n} {w}" for o, n, w in faults))
    print(f"time: {time.time()-t0:.0f}s")
    print(f"Elo {a.name} - {b.name}: {st['elo']:+.1f} [{st['elo_lo']:+.1f}, {st['elo_hi']:+.1f}] (95%), LOS {st['los']*100:.1f}%")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
