"""`pawnstorm annotate`: comment every move of a PGN with the engine's opinion.

    pawnstorm annotate GAME.pgn [--depth N | --movetime MS | --nodes N]
                       [-o OUT.pgn] [--graph EVAL.png] [--cp-only]

Every position of the game (before the first move, after each move) is
searched once with the given limit.  For the move from position P to Q,

* the search of P gives the best move and the value of P for the mover;
* the search of Q gives the value of the move played (negated: Q has the
  other side to move).

(A `--movetime` is spent in full on every position, forced moves included:
see `cli_support.analysis_search`.)

Each move gets a comment `[%eval E]` (the value after the move, pawns from
White's point of view, `#N` for mates — the lichess/ChessBase convention),
the best move in SAN when it differs from the one played, and a NAG by the
mover's evaluation loss L = value(P) − value(played move), with both values
clipped to ±10 pawns (a mate counts as 10 pawns):

    ??  blunder     L >= 300 cp   and a win-chance drop >= 0.30
    ?   mistake     L >= 150 cp   and a win-chance drop >= 0.20
    ?!  inaccuracy  L >=  70 cp   and a win-chance drop >= 0.10

Win chances are lichess's logistic curve 2 / (1 + exp(-0.00368 cp)) - 1 in
[-1, 1].  The second condition keeps already decided games quiet: going from
+9 to +6 loses 300 cp but hardly changes the result.  `--cp-only` drops it.
A move that is the engine's own best move is never marked.  Marked moves also
get the engine's line as a variation.

With --graph the evaluation curve (White's view, clipped to ±10 pawns) is
drawn to a PNG with matplotlib, an optional extra (`pip install
'pawnstorm[graph]'`); without it a message is printed and the PGN is still
written.  Several games give EVAL-1.png, EVAL-2.png, ...
"""
from __future__ import annotations

import argparse
import io
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import chess
import chess.pgn

from eval.nnue import default_net
from search.driver import Searcher
from search.timeman import Limits
from search.types import MATE
from uci_engine.cli_support import (EVAL_CAP, add_limit_options, analysis_search, clipped_cp,
                                    describe_limits, format_score, limits_from, progress_bar, white_score,
                                    win_chances)

if TYPE_CHECKING:
    from tqdm import tqdm

DEFAULT_LIMITS = Limits(movetime=500)

#: (NAG, name, minimum loss in centipawns, minimum drop in win chances), worst first.
THRESHOLDS = [
    (chess.pgn.NAG_BLUNDER, "Blunder", 300, 0.30),
    (chess.pgn.NAG_MISTAKE, "Mistake", 150, 0.20),
    (chess.pgn.NAG_DUBIOUS_MOVE, "Inaccuracy", 70, 0.10),
]
NAG_NAMES = {nag: name for nag, name, _, _ in THRESHOLDS}
NAG_SYMBOLS = {chess.pgn.NAG_BLUNDER: "??", chess.pgn.NAG_MISTAKE: "?", chess.pgn.NAG_DUBIOUS_MOVE: "?!"}
#: Plies of the engine's line added as a variation to a marked move.
VARIATION_PLIES = 6


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "annotate", help="annotate the moves of PGN games with evaluations and ?? / ? / ?!",
        description="Search every position of every game and write the games back with "
                    "[%eval] comments, best alternatives and ?? / ? / ?! marks "
                    "(blunder >= 300 cp, mistake >= 150 cp, inaccuracy >= 70 cp of loss, each "
                    "also needing a win-chance drop of 0.30 / 0.20 / 0.10 unless --cp-only).")
    parser.add_argument("pgn", metavar="GAME.pgn", help="PGN file with one or more games")
    add_limit_options(parser, default=f"{describe_limits(DEFAULT_LIMITS)} per position")
    parser.add_argument("-o", "--output", metavar="OUT.pgn", help="write the annotated PGN here (default: stdout)")
    parser.add_argument("--graph", metavar="EVAL.png",
                        help="draw the evaluation curve to this PNG (needs matplotlib)")
    parser.add_argument("--cp-only", action="store_true",
                        help="mark moves by centipawn loss alone, without the win-chance condition")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="draw a progress bar on stderr (default: only on a terminal)")
    parser.set_defaults(handler=run, parser=parser)


# --- judging moves ------------------------------------------------------------

@dataclass
class Judgement:
    """One searched position: what the side to move should play and what it is worth."""

    best: chess.Move | None
    pv: list[chess.Move]
    score: int  # side to move, search units (cp, MATE - plies)
    depth: int


def judge(searcher: Searcher, board: chess.Board, limits: Limits) -> Judgement:
    if board.is_checkmate():
        return Judgement(None, [], -MATE, 0)
    if board.is_game_over(claim_draw=False):
        return Judgement(None, [], 0, 0)  # stalemate, insufficient material, 75 moves, fivefold
    result, _ = analysis_search(searcher, board, limits)
    return Judgement(result.best_move, list(result.pv), result.score, result.depth)


def classify(loss_cp: int, chances_drop: float, cp_only: bool = False) -> int | None:
    """The NAG earned by a move that lost `loss_cp` centipawns and `chances_drop` win chances."""
    for nag, _, min_loss, min_drop in THRESHOLDS:
        if loss_cp >= min_loss and (cp_only or chances_drop >= min_drop):
            return nag
    return None


def eval_tag(score: int, turn: chess.Color) -> str:
    """`[%eval 0.35]` / `[%eval #-2]` for a position with `turn` to move; '' after checkmate."""
    if score <= -MATE:
        return ""
    text = format_score(score, turn)
    return f"[%eval {text.lstrip('+')}]"


def strip_eval(comment: str) -> str:
    return " ".join(chess.pgn.EVAL_REGEX.sub("", comment).split())


@dataclass
class GameReport:
    evals: list[float]  # pawns, White's view, clipped, after each ply (index 0: start position)
    counts: dict[tuple[chess.Color, int], int]
    losses: dict[chess.Color, list[int]]
    marks: list[tuple[int, int]]  # (ply after the move, NAG) of the marked moves


def annotate_game(game: chess.pgn.Game, searcher: Searcher, limits: Limits, cp_only: bool,
                  bar: tqdm) -> GameReport:
    """Add comments, NAGs and variations to `game` in place."""
    nodes = list(game.mainline())
    board = game.board()
    judgements = [judge(searcher, board, limits)]
    bar.update()
    for node in nodes:
        board.push(node.move)
        judgements.append(judge(searcher, board, limits))
        bar.update()

    board = game.board()
    report = GameReport(
        evals=[clipped_cp(white_score(judgements[0].score, board.turn)) / 100],
        counts={}, losses={chess.WHITE: [], chess.BLACK: []}, marks=[])
    for index, node in enumerate(nodes):
        before, after = judgements[index], judgements[index + 1]
        mover = board.turn
        played = node.move
        best_value = clipped_cp(before.score)
        played_value = clipped_cp(-after.score)
        if played == before.best or before.best is None:
            loss, drop = 0, 0.0
        else:
            loss = max(0, best_value - played_value)
            drop = max(0.0, win_chances(best_value) - win_chances(played_value))
        nag = classify(loss, drop, cp_only)
        report.losses[mover].append(loss)

        parts = [eval_tag(after.score, not mover)]
        if nag is not None:
            report.counts[mover, nag] = report.counts.get((mover, nag), 0) + 1
            node.nags.add(nag)
            report.marks.append((index + 1, nag))
            parts.append(f"{NAG_NAMES[nag]} ({format_score(before.score, mover)} → "
                         f"{format_score(after.score, not mover)}).")
        if before.best is not None and played != before.best:
            parts.append(f"{board.san(before.best)} was best ({format_score(before.score, mover)}).")
            if nag is not None:
                add_line(node.parent, board, before.pv or [before.best])
        old = strip_eval(node.comment)
        node.comment = " ".join(part for part in [parts[0], old, *parts[1:]] if part)

        board.push(played)
        report.evals.append(clipped_cp(white_score(after.score, board.turn)) / 100)
    return report


def add_line(parent: chess.pgn.GameNode, board: chess.Board, pv: list[chess.Move]) -> None:
    """Attach the engine's line (its legal prefix, a few plies) as a variation of `parent`."""
    probe = board.copy(stack=False)
    node = parent
    for move in pv[:VARIATION_PLIES]:
        if not probe.is_legal(move):
            break
        node = node.add_variation(move)
        probe.push(move)


# --- graph --------------------------------------------------------------------

def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def graph_problem(path: str) -> str | None:
    """Why the graph cannot be written at `path`, found before the searches, or None."""
    target = Path(path)
    if not target.name or target.is_dir():
        return f"{path!r} is a folder, not a file name"
    if not target.parent.is_dir():
        return f"no folder {str(target.parent)!r}"
    if not os.access(target.parent, os.W_OK):
        return f"folder {str(target.parent)!r} is not writable"
    return None


def graph_paths(path: str, games: int) -> list[Path]:
    target = Path(path)
    if games == 1:
        return [target]
    return [target.with_name(f"{target.stem}-{number}{target.suffix or '.png'}") for number in range(1, games + 1)]


MARK_COLOURS = {chess.pgn.NAG_BLUNDER: "red", chess.pgn.NAG_MISTAKE: "darkorange", chess.pgn.NAG_DUBIOUS_MOVE: "gold"}


def draw_graph(path: Path, evals: list[float], title: str, marks: list[tuple[int, int]] = ()) -> None:
    """The evaluation curve of one game (White's view, ±10 pawns) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    cap = EVAL_CAP / 100
    plies = list(range(len(evals)))
    moves = [ply / 2 for ply in plies]  # in moves: 0.5 is after White's 1st, 1.0 after Black's
    figure, axes = plt.subplots(figsize=(10, 3.5), dpi=100)
    try:
        axes.plot(moves, evals, color="black", linewidth=1.2)
        axes.fill_between(moves, evals, 0, where=[value >= 0 for value in evals], color="#e8e8e8",
                          interpolate=True)
        axes.fill_between(moves, evals, 0, where=[value <= 0 for value in evals], color="#404040",
                          interpolate=True)
        axes.axhline(0, color="grey", linewidth=0.6)
        for nag in MARK_COLOURS:
            plies_marked = [ply for ply, mark in marks if mark == nag]
            if plies_marked:
                axes.scatter([ply / 2 for ply in plies_marked], [evals[ply] for ply in plies_marked],
                             color=MARK_COLOURS[nag], edgecolors="black", zorder=3, label=NAG_SYMBOLS[nag])
        if marks:
            axes.legend(loc="upper left", fontsize="small")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_ylim(-cap - 0.5, cap + 0.5)
        axes.set_xlim(0, max(moves[-1], 1))
        axes.set_xlabel("move")
        axes.set_ylabel("evaluation (pawns, White's view)")
        axes.set_title(title)
        axes.grid(alpha=0.3)
        figure.tight_layout()
        figure.savefig(path, format="png")
    finally:
        plt.close(figure)


def game_title(game: chess.pgn.Game) -> str:
    headers = game.headers
    title = f"{headers.get('White', '?')} – {headers.get('Black', '?')}"
    result = headers.get("Result", "*")
    if result != "*":
        title += f"  {result}"
    return title


# --- command ------------------------------------------------------------------

def read_games(path: str, parser: argparse.ArgumentParser) -> list[chess.pgn.Game]:
    """The games of the PGN file at `path` that can be annotated; each problem is one warning on stderr.

    A game whose start position cannot be set up (a bad or impossible FEN
    tag, a variant other than Chess960) is skipped; one that plays a null
    move or an illegal move is cut there; text python-chess cannot read at
    all ends the reading, keeping the games before it.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        parser.error(f"cannot read {path}: {error.strerror or error}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("utf-8-sig", errors="replace")
        print(f"warning: {path} is not UTF-8 text; the bytes that are not were replaced", file=sys.stderr)
    games: list[chess.pgn.Game] = []
    stream = io.StringIO(text)
    # python-chess also logs each error; they are reported once, here, instead.
    logger = logging.getLogger("chess.pgn")
    propagate, logger.propagate = logger.propagate, False
    quiet = logging.NullHandler()
    logger.addHandler(quiet)
    number = 0
    try:
        while True:
            number += 1
            try:
                game = chess.pgn.read_game(stream)
            except Exception as error:  # python-chess's parser gave up on malformed text
                print(f"warning: game {number}: unreadable PGN ({type(error).__name__}); "
                      "it and the rest of the file are skipped", file=sys.stderr)
                break
            if game is None:
                break
            problem = _unusable(game)
            if problem is not None:
                print(f"warning: game {number}: skipped, {problem}", file=sys.stderr)
                continue
            for error in game.errors:
                print(f"warning: game {number}: {error} (the game is cut there)", file=sys.stderr)
            _cut_at_null_move(game, number)
            games.append(game)
    finally:
        logger.removeHandler(quiet)
        logger.propagate = propagate
    return games


def _unusable(game: chess.pgn.Game) -> str | None:
    """Why `game` cannot be annotated, or None."""
    try:
        board = game.board()
    except ValueError as error:  # a FEN tag python-chess cannot read
        return f"its start position cannot be set up ({error})"
    if type(board) is not chess.Board:
        return f"variant {game.headers.get('Variant', '?')!r} (standard chess and Chess960 only)"
    if not board.is_valid():
        return f"its start position is impossible ({board.fen()})"
    if game.next() is None:
        if game.errors:
            return "no moves and no readable game in it"
        if dict(game.headers) == dict(chess.pgn.Headers()):
            return "no tags and no moves: not a game (text that is not PGN reads as such)"
    return None


def _cut_at_null_move(game: chess.pgn.Game, number: int) -> None:
    """Take off the main line from its first null move (`--`): it passes, which no game of chess can."""
    for ply, node in enumerate(game.mainline(), 1):
        if not node.move:
            assert node.parent is not None
            node.parent.variations.remove(node)
            print(f"warning: game {number}: null move at ply {ply} (the game is cut there)", file=sys.stderr)
            return


def run(args: argparse.Namespace) -> int:
    games = read_games(args.pgn, args.parser)
    if not games:
        print(f"annotate: no games found in {args.pgn}", file=sys.stderr)
        return 1
    if args.output:  # a path that cannot be written is said now, not after the searches
        try:
            Path(args.output).open("a", encoding="utf-8").close()
        except OSError as error:
            print(f"annotate: cannot write {args.output}: {error.strerror or error}", file=sys.stderr)
            return 1
    problem = graph_problem(args.graph) if args.graph else None
    if problem is not None:  # said now, not after the searches, as for -o
        print(f"annotate: cannot write the graph: {problem}", file=sys.stderr)
        return 1
    can_graph = True
    if args.graph and not matplotlib_available():
        can_graph = False
        print("annotate: --graph needs matplotlib, which is not installed "
              "(pip install matplotlib, or pip install 'pawnstorm[graph]'); "
              "the annotated PGN is written without a graph", file=sys.stderr)

    limits = limits_from(args, DEFAULT_LIMITS)
    positions = sum(1 + len(list(game.mainline_moves())) for game in games)
    print(f"annotate: {len(games)} game{'s' if len(games) > 1 else ''}, {positions} positions, "
          f"{describe_limits(limits)} each", file=sys.stderr)
    searcher = Searcher(args.hash, net=default_net())
    bar = progress_bar(positions, "annotate", enabled=args.progress)
    reports = []
    for game in games:
        searcher.clear()
        reports.append(annotate_game(game, searcher, limits, args.cp_only, bar))
        game.headers["Annotator"] = f"Pawnstorm ({describe_limits(limits)} per position)"
    bar.close()

    exporter_text = "\n\n".join(str(game) for game in games) + "\n"
    if args.output:
        try:
            Path(args.output).write_text(exporter_text, encoding="utf-8")
        except OSError as error:
            print(f"annotate: cannot write {args.output}: {error.strerror or error}", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(exporter_text)
        sys.stdout.flush()

    for number, (game, report) in enumerate(zip(games, reports), 1):
        summary = []
        for color, name in ((chess.WHITE, "White"), (chess.BLACK, "Black")):
            marks = ", ".join(f"{report.counts.get((color, nag), 0)}{NAG_SYMBOLS[nag]}" for nag, *_ in THRESHOLDS)
            losses = report.losses[color]
            average = sum(losses) / len(losses) if losses else 0
            summary.append(f"{name} {marks}, average loss {average:.0f} cp")
        print(f"game {number} ({game_title(game)}): " + "; ".join(summary), file=sys.stderr)

    status = 0
    if args.graph and can_graph:
        try:
            for path, game, report in zip(graph_paths(args.graph, len(games)), games, reports):
                draw_graph(path, report.evals, game_title(game), report.marks)
                print(f"annotate: evaluation graph written to {path}", file=sys.stderr)
        except ImportError as error:
            print(f"annotate: cannot draw the graph, matplotlib failed to load ({error}); "
                  "the PGN was written", file=sys.stderr)
        except OSError as error:
            print(f"annotate: cannot write the graph: {error.strerror or error}", file=sys.stderr)
            status = 1
    return status
