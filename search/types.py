"""The search's vocabulary: score scale, bounds, plies and piece values (Stockfish's `types.h`).

Scores are centipawns from the side to move's point of view.  Above every
evaluation sit, from the top down:

* mate scores, ``MATE - plies to mate`` (the sooner, the higher), down to
  MATE_BOUND;
* tablebase wins whose distance to mate is unknown, ``TB_WIN - plies``
  (the sooner the win is reached, the higher), down to TB_WIN_BOUND;

and the mirror images below zero for the side being mated or losing.
INFINITY is beyond every score, for the widest alpha-beta window.  Each
bound is derived from the one above it.

Nothing here imports the rest of the engine: every module of `search/`, and
the front end in `uci_engine/`, takes these names from here.  The evaluation
(`eval/`) has its own material weights, tuned to game results; the values
here are what exchanges and move ordering count with.
"""
from __future__ import annotations

from typing import Optional, Sequence

import chess

#: Deepest ply the search reaches from the root (the PV and killer tables' size).
MAX_PLY = 100

#: Score of checkmating right now; mated at ply p scores -(MATE - p).
MATE = 32000
#: Room below MATE for mate distances: a mate found in the search is under
#: MAX_PLY plies away, but at a root the tables hold, Gaviota's distance to
#: mate (up to a few hundred plies with five pieces) is reported as is.
MATE_PLIES = 1000
#: Scores beyond this are mate scores.
MATE_BOUND = MATE - MATE_PLIES
#: A won position whose mate distance is unknown scores TB_WIN - ply: above
#: every evaluation, below every mate score, and higher when the win is
#: reached sooner (which makes the search head for the conversion).
TB_WIN = MATE_BOUND - 1
#: Room below TB_WIN for tablebase wins measured from any node: a search ply
#: (under MAX_PLY) plus, at the root, the plies to zeroing that the
#: fifty-move rule allows (at most 100); 256 leaves a margin.
TB_WIN_PLIES = 256
#: Scores beyond this are tablebase wins or mates ("decisive" scores).
TB_WIN_BOUND = TB_WIN - TB_WIN_PLIES
#: Beyond every score: the bounds of a full alpha-beta window.
INFINITY = MATE + 1
#: The most a static evaluation scores, either way: far below the decisive
#: scores, which an evaluation must never be taken for (a sane net stays
#: within a few thousand; one with an absurd output scale would not).
MAX_STATIC_SCORE = 20_000

#: What a stored or reported score is: exact, a lower bound (the search
#: failed high) or an upper bound (it failed low).
EXACT, LOWER, UPPER = 0, 1, 2

#: Piece values for static exchange evaluation and for ordering captures by
#: victim, indexed by python-chess piece type.  The king is worth more than
#: anything it can win, so in an exchange it only ever captures last.
PIECE_VALUE = [0, 100, 320, 330, 500, 950, 20000]
PAWN_VALUE = PIECE_VALUE[chess.PAWN]
#: Attackers ranked for MVV-LVA (least valuable attacker first among equal
#: victims): pawn units, with the king last.  Any step between two victims'
#: PIECE_VALUE (10 at least) outweighs every difference here (9 at most), so
#: the victim always decides first.
ATTACKER_RANK = [0, 1, 3, 3, 5, 9, 10]

#: A mailbox: the piece type on each square (None where empty), indexed by
#: square.  The search keeps one in step with its board
#: (`search.position.Position.mailbox`) and hands it to the ordering, SEE and
#: check tests, where a list index replaces python-chess's `piece_type_at`.
Mailbox = Sequence[Optional[chess.PieceType]]


def mailbox_of(board: chess.Board) -> list[chess.PieceType | None]:
    """The mailbox of `board`, read from its bitboards (64 `piece_type_at` calls: not for hot paths)."""
    return [board.piece_type_at(square) for square in chess.SQUARES]


def mate_in(score: int) -> int | None:
    """Moves to mate for a side-to-move score (negative: being mated), or None for any other score."""
    if score > MATE_BOUND:
        return (MATE - score + 1) // 2
    if score < -MATE_BOUND:
        return -((MATE + score) // 2)
    return None


def is_decisive(score: int) -> bool:
    """A mate or a tablebase win (or their losses): the game is decided, whatever the margin."""
    return abs(score) > TB_WIN_BOUND


def uci_score(score: int, bound: int = EXACT) -> str:
    """A score as UCI writes it: `cp 35`, `mate 3`, `mate -2`, with `lowerbound`/`upperbound`."""
    mate = mate_in(score)
    text = f"mate {mate}" if mate is not None else f"cp {score}"
    if bound == LOWER:
        return text + " lowerbound"
    if bound == UPPER:
        return text + " upperbound"
    return text
