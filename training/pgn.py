"""Played games from PGN files: the one reader of training/.

Every pipeline that learns from games (the Texel tuner's `tuning_data.py`,
the WDL fit `wdl_fit.py`, the data generator `datagen.py`) reads them here,
with one rule for what counts: a game is used only when its `Result` tag is
a decided result (`1-0`, `0-1`, `1/2-1/2`); `*` or no tag skips it.  Files
are plain or gzipped (by the `.gz` name) UTF-8, undecodable bytes replaced.
Which plies of a game each pipeline keeps is its own business (the tuner
wants quiet positions past the book, the WDL fit scored ones).
"""
from __future__ import annotations

import gzip
import io
import os
from typing import TYPE_CHECKING, BinaryIO, Iterable, Iterator, TextIO

import chess
import chess.pgn

if TYPE_CHECKING:
    from tqdm import tqdm

#: A decided game's result for White: 1 a win, 0.5 a draw, 0 a loss.
RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def white_result(game: chess.pgn.Game) -> float | None:
    """The game's result for White (1, 0.5, 0), or None when it is not decided."""
    return RESULTS.get(game.headers.get("Result", "*"))


def _text(raw: BinaryIO, path: str) -> TextIO:
    stream: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb") if path.endswith(".gz") else raw  # type: ignore[assignment]
    return io.TextIOWrapper(stream, encoding="utf-8", errors="replace")


def open_pgn(path: str) -> TextIO:
    """A PGN file as text, gunzipped when its name ends in .gz."""
    return io.TextIOWrapper(gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb"),
                            encoding="utf-8", errors="replace")


def finished_games(paths: Iterable[str], bar: tqdm | None = None) -> Iterator[tuple[chess.pgn.Game, float]]:
    """(game, result for White) of every decided game of the files, in order.

    `bar`, when given, counts the bytes read: its total is set to the files'
    size and it advances after every game.
    """
    paths = list(paths)
    if bar is not None:
        bar.reset(total=sum(os.path.getsize(path) for path in paths))
    done = 0
    for path in paths:
        with open(path, "rb") as raw, _text(raw, path) as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                if bar is not None:
                    bar.update(done + raw.tell() - bar.n)
                result = white_result(game)
                if result is not None:
                    yield game, result
        done += os.path.getsize(path)
        if bar is not None:
            bar.update(done - bar.n)


def mainline_positions(game: chess.pgn.Game) -> Iterator[tuple[int, chess.Board, chess.pgn.ChildNode]]:
    """(ply, position before the move, the move's node) along the game's main line.

    The board is one object, moved on after each step: copy it to keep it.
    """
    board = game.board()
    for ply, node in enumerate(game.mainline()):
        yield ply, board, node
        board.push(node.move)
