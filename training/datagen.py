"""Labelled positions for the NNUE: varied games, quiet positions, Stockfish's scores.

    python -m training.datagen --out data/nnue --workers 2 --seed 1 \
        --pgn data/stockfish-800.pgn.gz --selfplay-chunks 200

Work is cut into chunks, each a deterministic task with its own output file
(`<source>-<index>.psd.xz`, format in `training.packed`; a chunk whose
version 1 file `.psd.gz` exists counts as made):

* ``sf-NNNN``: `--pgn-games` games of the PGN file (Stockfish self-play, see
  data/README.md), from ply `--skip-plies` on;
* ``self-NNNN``: `--chunk-games` games of Pawnstorm against itself at about
  `--selfplay-nodes` nodes a move, each opened from the bundled book (weighted
  random choice) followed by 2..6 uniformly random legal moves, so that the
  games leave the book's well-trodden lines.  Results come from the rules or
  from adjudication by Pawnstorm's own scores (resign at 1000 cp for 4 plies,
  draw at <= 10 cp for 12 plies after ply 80, draw at 240 plies).
* ``tree-NNNN``: the same self-play games (other seeds), but what is kept of
  each move is one position drawn uniformly from those the search evaluated
  (reservoir sampling over `Position.evaluate`), not the position played.
  Why: the evaluation is asked about the search's positions, full of
  blunders and odd lines that no game reaches, and nets trained on game
  positions alone scored those worse than the classical evaluation
  (docs/nnue.md).  Their game result says nothing about them: it is stored
  as unknown and the trainer uses the teacher's score alone.
* ``play-NNNN``: `--chunk-games` games the teacher plays against itself:
  from the bundled book plus 2..6 random moves, each move is the teacher's
  best move at the labelling depth (so a move costs nothing beyond its
  label), except that with probability `PLAY_RANDOM` a random legal move is
  played instead, which leads into the unbalanced positions a search meets.
  Ten times the rate of ``tree`` chunks (no Pawnstorm search), for variety
  across many more games.  Adjudicated at |score| >= `PLAY_DECIDED` for 4
  plies, ended at 300 plies; results are stored as unknown.

In a chunk a position is kept if the side to move is not in check and it is
new to the chunk (key: pieces and side to move, what the features see); it is
then labelled by Stockfish at a fixed depth (hash cleared at each game's
start, the game's positions labelled in order), and dropped
if Stockfish's best move is a capture or a promotion (the position is not
quiet: its static score would be a poor target).  The record keeps the
label and the game result (both for the side to move); the trainer blends them.

A chunk's file is written only when it is complete, under a temporary name
then renamed, so an interrupted run is resumed by running the same command:
finished chunks are skipped.  Labels depend only on the chunk (its games,
labelled in order) and the depth, and games only on the seed and the chunk
index, so a chunk's bytes are the same whichever worker made it and whenever.
Across chunks duplicates are removed when the trainer loads the data.
`provenance.json` beside the chunks records the teacher, the limits, the seed
and every chunk's counts.

With ``--cluster ADDRESS`` the chunks are tasks on a Dask cluster instead of
``--workers`` local processes (`training.datagen_cluster`, docs/cluster.md):
the same files, byte for byte, and per chunk the teacher and host in
`provenance.json`.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

import chess
import chess.pgn
from tqdm import tqdm

from search.position import Position
from tools import common
from tools.cluster import CONNECT_TIMEOUT, ClusterError, address_problem
from training import datagen_cluster
from training.pgn import open_pgn, white_result
from training.chunks import SUFFIX, chunk_names, write_chunk
from training.records import RESULT_UNKNOWN, Record
from training.teacher import Label, Teacher

MAX_PLIES = 240
RESIGN_SCORE, RESIGN_PLIES = 1000, 4
PLAY_RANDOM, PLAY_DECIDED, PLAY_MAX_PLIES = 0.1, 2000, 300
DRAW_SCORE, DRAW_PLIES, DRAW_AFTER = 10, 12, 80
#: A verdict of `tools.common.adjudicate` as a result for White on this module's scale.
WHITE_POINTS = {"1-0": 2, "1/2-1/2": 1, "0-1": 0}


@dataclass(frozen=True)
class Task:
    """One chunk of work: which games, and where its records go."""

    name: str  # file stem, e.g. "sf-0003"
    kind: str  # "sf", "self", "tree" or "play"
    index: int


@dataclass(frozen=True)
class Settings:
    out: Path
    stockfish: str
    depth: int
    seed: int
    pgn: str | None
    pgn_games: int
    skip_plies: int
    chunk_games: int
    selfplay_nodes: int


# --- where positions come from ---------------------------------------------

def pgn_games(path: str, first: int, count: int) -> list[tuple[list[chess.Board], int]]:
    """(positions before each move, result for White: 2, 1, 0) of the decided games among first..first+count-1."""
    games = []
    with open_pgn(path) as handle:
        number = 0
        while number < first + count:
            if number < first:
                if not chess.pgn.skip_game(handle):
                    break
                number += 1
                continue
            game = chess.pgn.read_game(handle)
            if game is None:
                break
            number += 1
            result = white_result(game)
            if result is None:
                continue
            board = game.board()
            boards = []
            for move in game.mainline_moves():
                boards.append(board.copy(stack=False))
                board.push(move)
            games.append((boards, round(2 * result)))
    return games


def adjudicate(white_scores: list[int], ply: int) -> int | None:
    """A result for White (2, 1, 0) when the scores say the game is decided.

    `tools.common.adjudicate`, the rule every game-playing tool applies, with
    this module's thresholds (part of the data's definition: a change would
    change the chunks) and on its result scale.
    """
    verdict = common.adjudicate(white_scores, ply, resign_score=RESIGN_SCORE, resign_plies=RESIGN_PLIES,
                                draw_score=DRAW_SCORE, draw_plies=DRAW_PLIES, draw_after=DRAW_AFTER)
    return None if verdict is None else WHITE_POINTS[verdict]


class TreeSampler:
    """Draws one position uniformly from those a search evaluates (reservoir sampling).

    The searcher walks `position_type`, a `Position` whose `evaluate` shows
    the sampler each position first: a training-only subclass, so that the
    engine's hot path carries no sampling code.
    """

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.seen = 0
        self.chosen: chess.Board | None = None
        sampler = self

        class SampledPosition(Position):
            __slots__ = ()

            def evaluate(self) -> int:
                sampler.saw(self.board)
                return Position.evaluate(self)

        self.position_type = SampledPosition

    def saw(self, board: chess.Board) -> None:
        """One more evaluated position: it replaces the chosen one with probability 1 / (positions seen)."""
        self.seen += 1
        if self.rng.randrange(self.seen) == 0:
            self.chosen = board.copy(stack=False)

    def take(self) -> chess.Board | None:
        chosen, self.chosen, self.seen = self.chosen, None, 0
        return chosen


def randomised_opening(rng: random.Random) -> chess.Board:
    """The bundled book (weighted random choice), then 2..6 uniformly random legal moves."""
    from opening_book import OpeningBook

    board = chess.Board()
    with OpeningBook() as book:
        while (move := book.choose(board, rng)) is not None:
            board.push(move)
    for _ in range(rng.randint(2, 6)):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
    return board


def teacher_game(rng: random.Random, teacher: Teacher) -> list[tuple[chess.Board, Label]]:
    """A `play` game: every position with the teacher's label, moves mostly the teacher's."""
    board = randomised_opening(rng)
    labelled: list[tuple[chess.Board, Label]] = []
    decided = 0
    teacher.new_game()
    while board.outcome(claim_draw=True) is None and board.ply() < PLAY_MAX_PLIES and decided < 4:
        label = teacher.label(board)
        labelled.append((board.copy(stack=False), label))
        decided = decided + 1 if abs(label.score) >= PLAY_DECIDED else 0
        move = label.best_move
        if move is None or rng.random() < PLAY_RANDOM:
            move = rng.choice(list(board.legal_moves))
        board.push(move)
    return labelled


def selfplay_game(rng: random.Random, nodes: int, tree: bool = False) -> tuple[list[chess.Board], int]:
    """One Pawnstorm game from a randomised opening: (positions, result for White).

    The positions are those before each searched move, or with `tree` one
    drawn from each move's search tree (then the result is RESULT_UNKNOWN).
    """
    from search.driver import Searcher
    from search.timeman import Limits

    board = randomised_opening(rng)
    searcher = Searcher(hash_mb=4)
    sampler = TreeSampler(rng)
    boards: list[chess.Board] = []
    white_scores: list[int] = []
    result: int | None = None
    while result is None:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            result = 1 if outcome.winner is None else (2 if outcome.winner else 0)
            break
        if board.ply() >= MAX_PLIES:
            result = 1
            break
        limits = Limits(nodes=int(nodes * rng.uniform(0.75, 1.25)))
        if tree:
            searcher.position_type = sampler.position_type
            found = searcher.search(board, limits)
            sampled = sampler.take()
            if sampled is not None:
                boards.append(sampled)
        else:
            found = searcher.search(board, limits)
            boards.append(board.copy(stack=False))
        white_scores.append(found.score if board.turn == chess.WHITE else -found.score)
        assert found.best_move is not None
        board.push(found.best_move)
        result = adjudicate(white_scores, board.ply())
    return boards, RESULT_UNKNOWN if tree else result


# --- one chunk --------------------------------------------------------------

_teacher: Teacher | None = None
_settings: Settings | None = None


def _start_worker(settings: Settings) -> None:
    global _teacher, _settings
    _settings = settings
    _teacher = Teacher(settings.stockfish, settings.depth)


def games_of(task: Task, settings: Settings, teacher: Teacher) -> list[list[tuple[chess.Board, int, Label | None]]]:
    """The chunk's games as (position, result for the side to move, label if the game already made one)."""
    if task.kind == "play":
        rng = random.Random(f"pawnstorm-datagen-play-{settings.seed}-{task.index}")
        return [[(board, RESULT_UNKNOWN, label) for board, label in teacher_game(rng, teacher)]
                for _ in range(settings.chunk_games)]
    if task.kind == "sf":
        assert settings.pgn is not None
        games = pgn_games(settings.pgn, task.index * settings.pgn_games, settings.pgn_games)
    elif task.kind == "tree":
        rng = random.Random(f"pawnstorm-datagen-tree-{settings.seed}-{task.index}")
        games = [selfplay_game(rng, settings.selfplay_nodes, tree=True) for _ in range(settings.chunk_games)]
    else:
        rng = random.Random(f"pawnstorm-datagen-{settings.seed}-{task.index}")
        games = [selfplay_game(rng, settings.selfplay_nodes) for _ in range(settings.chunk_games)]
    skip = settings.skip_plies if task.kind == "sf" else 0
    return [[(board, _for_side_to_move(white_result, board.turn), None) for board in boards[skip:]]
            for boards, white_result in games]


def _for_side_to_move(white_result: int, turn: chess.Color) -> int:
    return white_result if white_result == RESULT_UNKNOWN or turn == chess.WHITE else 2 - white_result


def run_task(task: Task) -> tuple[str, dict[str, int]]:
    """Make one chunk file with this process's teacher and settings (`_start_worker`); its name and counts."""
    assert _teacher is not None and _settings is not None
    return make_chunk(task, _settings, _teacher)


def make_chunk(task: Task, settings: Settings, teacher: Teacher) -> tuple[str, dict[str, int]]:
    """Make one chunk file in `settings.out`, labelled by `teacher`; returns its name and counts."""
    # cleared_per_game: the teacher's hash was cleared once a game (chunks without it: once a position)
    counts = {"games": 0, "positions": 0, "in_check": 0, "duplicate": 0, "noisy": 0, "written": 0,
              "cleared_per_game": 1}
    seen: set[tuple[int, bytes, bool]] = set()
    records: list[Record] = []
    for game in games_of(task, settings, teacher):
        counts["games"] += 1
        if any(label is None for _, _, label in game):  # play games come labelled
            teacher.new_game()  # each game's labels independent of the games before it
        for board, result, label in game:
            counts["positions"] += 1
            if board.is_check():
                counts["in_check"] += 1
                continue
            record = Record(board, 0, result)
            if record.identity in seen:
                counts["duplicate"] += 1
                continue
            seen.add(record.identity)
            label = label or teacher.label(board)  # labelled only when new: the teacher is the slow part
            if label.best_move is None or board.is_capture(label.best_move) or label.best_move.promotion:
                counts["noisy"] += 1
                continue
            records.append(replace(record, score=label.score))
    counts["written"] = write_chunk(settings.out / f"{task.name}{SUFFIX}", records)
    return task.name, counts


# --- the run -----------------------------------------------------------------

def plan(settings: Settings, sf_chunks: int, self_chunks: int, tree_chunks: int = 0, play_chunks: int = 0,
         first: int = 0) -> list[Task]:
    """All chunks from index `first` on, the sources interleaved so that a partial run has each.

    `first` splits one plan between machines that share no folder: each
    makes its own range, and the files (named by index) merge without clashes.
    """
    tasks = []
    for index in range(first, max(sf_chunks, self_chunks, tree_chunks, play_chunks)):
        for kind, chunks in (("sf", sf_chunks), ("self", self_chunks), ("tree", tree_chunks), ("play", play_chunks)):
            if index < chunks:
                tasks.append(Task(f"{kind}-{index:04d}", kind, index))
    return tasks


@contextmanager
def made_chunks(cluster: str | None, workers: int, settings: Settings,
                pending: list[Task]) -> Iterator[Iterator[tuple[str, dict[str, int]]]]:
    """(chunk name, counts) as chunks are made: by `workers` local processes, or by the cluster at `cluster`.

    Either way each chunk's file is in `settings.out` when it is yielded.
    The cluster path (training.datagen_cluster) imports Dask only when it
    connects: a local run needs none.
    """
    if cluster is not None:
        with datagen_cluster.chunks(cluster, settings, pending, make_chunk) as made:
            yield made
        return
    with multiprocessing.Pool(workers, initializer=_start_worker, initargs=(settings,)) as pool:
        yield pool.imap_unordered(run_task, pending)


def load_provenance(directory: Path) -> dict:
    """The folder's `provenance.json`, or an empty one."""
    path = directory / "provenance.json"
    return json.loads(path.read_text()) if path.exists() else {"chunks": {}}


def save_provenance(directory: Path, provenance: dict) -> None:
    """Write `provenance.json`: total_written recounted, chunks sorted by name, one chunk a line.

    One line a chunk, not json's indented eight: the file counts against
    data/'s size cap, and at 48,461 chunks it was 7.1 MB indented, 5.4 MB so
    (about 280,000 positions' room); a line a chunk still diffs chunk by chunk.
    """
    provenance["total_written"] = sum(chunk["written"] for chunk in provenance["chunks"].values())
    provenance["chunks"] = dict(sorted(provenance["chunks"].items()))
    chunks = ",\n".join(f"  {json.dumps(name)}: {json.dumps(entry, separators=(',', ':'))}"
                         for name, entry in provenance["chunks"].items())
    rest = {key: value for key, value in provenance.items() if key != "chunks"}
    body = json.dumps(rest, indent=1)[1:-1].strip("\n")  # the other fields, as before
    text = "{\n \"chunks\": {\n" + chunks + ("\n" if chunks else "") + " },\n" + body + "\n}\n"
    (directory / "provenance.json").write_text(text)


def count_pgn_games(path: str) -> int:
    with open_pgn(path) as handle:
        return sum(1 for line in handle if line.startswith("[Event "))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("data/nnue"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stockfish", default="/usr/games/stockfish")
    parser.add_argument("--depth", type=int, default=8, help="teacher's search depth (default 8)")
    parser.add_argument("--pgn", default=None, help="games whose positions to label (.pgn or .pgn.gz)")
    parser.add_argument("--pgn-games", type=int, default=200, help="games of the PGN per chunk")
    parser.add_argument("--skip-plies", type=int, default=8, help="opening plies of PGN games to skip")
    parser.add_argument("--selfplay-chunks", type=int, default=0)
    parser.add_argument("--tree-chunks", type=int, default=0, help="chunks of positions from search trees")
    parser.add_argument("--play-chunks", type=int, default=0, help="chunks of the teacher's own games")
    parser.add_argument("--chunk-games", type=int, default=40, help="games per self, tree or play chunk")
    parser.add_argument("--selfplay-nodes", type=int, default=400)
    parser.add_argument("--first-chunk", type=int, default=0, metavar="INDEX",
                        help="make only the chunks from this index on (to split a run between machines)")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--cluster", metavar="ADDRESS", default=None,
                        help="make the chunks on a Dask cluster: its scheduler's address (tcp://host:8786) or "
                             f"scheduler file; an unreachable one is given up after {CONNECT_TIMEOUT:.0f} s; "
                             "needs the `cluster` extra (docs/cluster.md)")
    args = parser.parse_args(argv)
    if args.cluster is not None and (problem := address_problem(args.cluster)) is not None:
        print(f"datagen: {problem}", file=sys.stderr)
        return 2

    settings = Settings(args.out, args.stockfish, args.depth, args.seed, args.pgn, args.pgn_games,
                        args.skip_plies, args.chunk_games, args.selfplay_nodes)
    args.out.mkdir(parents=True, exist_ok=True)
    sf_chunks = -(-count_pgn_games(args.pgn) // args.pgn_games) if args.pgn else 0
    tasks = plan(settings, sf_chunks, args.selfplay_chunks, args.tree_chunks, args.play_chunks, args.first_chunk)
    provenance = load_provenance(args.out)
    made_before = chunk_names(args.out)  # loose or already packed into shards
    pending = [task for task in tasks if task.name not in made_before]
    probe = Teacher(args.stockfish, args.depth)
    teacher_name = probe.name
    probe.close()
    provenance.update({
        "teacher": teacher_name,
        "limit": (f"depth {args.depth}, Threads 1, Hash 1 MB, hash cleared before every game (before every "
                  "position in chunks without cleared_per_game)"),
        "seed": args.seed,
        "pgn": args.pgn,
        "pgn_games_per_chunk": args.pgn_games,
        "skip_plies": args.skip_plies,
        "selfplay": {"games_per_chunk": args.chunk_games, "nodes": args.selfplay_nodes,
                     "opening": "bundled book (weighted random), then 2..6 random legal moves"},
        "tree": "self-play games as above (seeds 'pawnstorm-datagen-tree-<seed>-<chunk>'), one position per move "
                "drawn uniformly from those the search evaluated; result unknown (3)",
        "play": f"the teacher's own games (seeds 'pawnstorm-datagen-play-<seed>-<chunk>'), opened as above, its best "
                f"move at the labelling depth or with probability {PLAY_RANDOM} a random one; adjudicated at "
                f"|score| >= {PLAY_DECIDED} for 4 plies or {PLAY_MAX_PLIES} plies; result unknown (3)",
        "command": "python -m training.datagen " + " ".join(argv if argv is not None else sys.argv[1:]),
    })

    try:
        with made_chunks(args.cluster, args.workers, settings, pending) as made:
            save_provenance(args.out, provenance)
            print(f"{len(tasks)} chunks planned, {len(tasks) - len(pending)} done, {len(pending)} to make",
                  file=sys.stderr)
            bar = tqdm(total=len(pending), unit="chunk", disable=args.no_progress)
            for name, counts in made:
                provenance["chunks"][name] = counts
                save_provenance(args.out, provenance)
                bar.update(1)
                bar.set_postfix(positions=provenance["total_written"])
            bar.close()
    except ClusterError as error:
        print(f"datagen: {error}", file=sys.stderr)
        return 2
    print(f"{len(pending)} chunks made; {provenance['total_written']} positions in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    # Through the module's own name, not __main__'s: a cluster's tasks then
    # pickle `Task` and `Settings` by reference to training.datagen.
    from training import datagen
    sys.exit(datagen.main())
