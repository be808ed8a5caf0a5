"""Texel tuning data: labelled quiet positions read from played games.

`quiet_positions` reads PGN files (plain or gzipped) and keeps the positions
of finished games that are quiet: past the first `SKIP_PLIES` plies, side to
move not in check, the move played neither a capture nor a promotion, and
(optionally) quiescence search moving the static evaluation by at most
`QSEARCH_MARGIN` centipawns.  Each one becomes a `Sample` labelled with the
game's result for White and, when the PGN has one, the `[%eval]` of the move
played.

Used by training/tuner.py (docs/tuning.md); needs only the engine and its dependencies.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import chess
import chess.pgn
from tqdm import tqdm

from training.pgn import finished_games, mainline_positions

#: The first plies of a self-play game are close to the book opening.
SKIP_PLIES = 8
#: Positions whose quiescence score moves this far from the static one are not quiet.
QSEARCH_MARGIN = 50
#: Quiescence search is given up (and the position dropped) past this many nodes.
QSEARCH_NODE_LIMIT = 2000
#: Centipawn stand-in for a mate score in a `[%eval]` comment.
MATE_CP = 10_000


# --- positions -----------------------------------------------------------------

@dataclass(frozen=True)
class Sample:
    fen: str
    #: The game's result for White: 1, 0.5 or 0.
    result: float
    #: Ordinal of the game in the input, for splitting by game.
    game: int
    #: The `[%eval]` of the move played from here (the engine's search score of
    #: this position, White's view, cp; mates as +-MATE_CP), if the PGN has one.
    search: int | None = None


class QuiescenceGap:
    """|quiescence score - static evaluation| with the engine's own search."""

    def __init__(self, node_limit: int = QSEARCH_NODE_LIMIT) -> None:
        from search.tt import TranspositionTable

        self.node_limit = node_limit
        self.tt = TranspositionTable(1)

    def __call__(self, board: chess.Board) -> int | None:
        """The gap in centipawns, or None when the search ran over its node limit."""
        from search.alphabeta import AlphaBeta, SearchAborted
        from search.types import INFINITY
        from search.position import Position

        pos = Position(board.copy(stack=False))
        search = AlphaBeta(pos, self.tt, should_stop=lambda nodes: nodes > self.node_limit)
        try:
            score = search.quiescence(-INFINITY, INFINITY, 0)
        except SearchAborted:
            return None
        return abs(score - pos.evaluate())


def is_quiet(board: chess.Board, move: chess.Move) -> bool:
    """Not in check, and the move played from here is neither a capture nor a promotion."""
    return not board.is_check() and not board.is_capture(move) and move.promotion is None


def quiet_positions(
    paths: Iterable[str],
    skip_plies: int = SKIP_PLIES,
    qsearch_margin: int | None = None,
    max_positions: int | None = None,
    progress: bool = False,
    stats: dict[str, int] | None = None,
) -> list[Sample]:
    """Labelled quiet positions of the finished games in PGN files, deduplicated by FEN.

    A position is kept when at least `skip_plies` plies of the game were
    played before it, the side to move is not in check, the move played from
    it is not a capture or a promotion, and (when `qsearch_margin` is given)
    quiescence search changes its static evaluation by at most that many
    centipawns.  The first occurrence of a position wins; the label is the
    game's result for White.
    """
    gap = QuiescenceGap() if qsearch_margin is not None else None
    seen: set[str] = set()
    samples: list[Sample] = []
    counts = stats if stats is not None else {}
    for key in ("games", "plies", "noisy", "duplicate", "qsearch"):
        counts.setdefault(key, 0)
    bar = tqdm(desc="positions", unit="B", unit_scale=True, disable=not progress)
    for game, result in finished_games(paths, bar):
        if max_positions is not None and len(samples) >= max_positions:
            break
        number = counts["games"]
        counts["games"] += 1
        for ply, board, node in mainline_positions(game):
            move = node.move
            if ply >= skip_plies and (max_positions is None or len(samples) < max_positions):
                counts["plies"] += 1
                if not is_quiet(board, move):
                    counts["noisy"] += 1
                else:
                    fen = board.fen(en_passant="legal")
                    key = fen.rsplit(" ", 2)[0]  # without the move counters
                    if key in seen:
                        counts["duplicate"] += 1
                    elif gap is not None and ((g := gap(board)) is None or g > qsearch_margin):
                        counts["qsearch"] += 1
                    else:
                        seen.add(key)
                        score = node.eval()
                        search = score.white().score(mate_score=MATE_CP) if score is not None else None
                        samples.append(Sample(fen, result, number, search))
        bar.set_postfix_str(f"{counts['games']} games, {len(samples)} positions", refresh=False)
    bar.close()
    return samples
