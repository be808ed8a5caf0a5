"""A weaker Pawnstorm for people to play against (`UCI_LimitStrength`).

Two knobs make the engine weaker in a way that feels like a human's play
rather than random blunders:

* a node budget per move that grows exponentially with the Elo asked for
  (each doubling of nodes is worth a roughly constant number of Elo), so a
  weak setting sees shallow tactics only;
* Stockfish's "skill" move choice: the search runs with several lines
  (MultiPV) and picks among them with a random push that is larger for
  weaker settings, so sometimes a second-best move is played, but a move
  much worse than the best is rarely chosen.

The constants are calibrated by matches against Stockfish's own
`UCI_Elo` ladder; docs/strength-limit.md has the runs and how the mapping was
corrected from them.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

import chess

ELO_MIN = 1000
ELO_MAX = 2000
#: Lines searched to choose from.
CANDIDATE_LINES = 4
#: Node budget at ELO_MIN and the Elo that doubles it.
BASE_NODES = 64
ELO_PER_DOUBLING = 125
#: Calibration shift: the Elo the node/skill mapping is evaluated at is the
#: requested Elo plus this (from the matches in docs/strength-limit.md).
CALIBRATION_SHIFT = 0
PAWN = 100


@dataclass(frozen=True)
class StrengthLimit:
    """Search settings for a requested Elo."""

    elo: int

    @property
    def _effective(self) -> float:
        return min(max(self.elo, ELO_MIN), ELO_MAX) + CALIBRATION_SHIFT

    def nodes(self) -> int:
        """Node budget per move."""
        return max(16, round(BASE_NODES * 2 ** ((self._effective - ELO_MIN) / ELO_PER_DOUBLING)))

    def weakness(self) -> int:
        """Stockfish-style weakness: 0 plays the best line, larger pushes harder."""
        span = ELO_MAX - ELO_MIN
        fraction = (ELO_MAX - min(max(self._effective, ELO_MIN), ELO_MAX)) / span
        # Below 128 (Stockfish uses at most 120) so the deficit term never
        # makes a worse line preferable on average.
        return round(10 + 110 * fraction)

    def choose(self, lines: Sequence[tuple[chess.Move, int]], rng: random.Random) -> chess.Move:
        """Pick a move among (move, score) lines, best first.

        Each line's score gets a random push proportional to the weakness and
        to how far the lines are spread (capped at a pawn), plus a term
        that grows with the line's own deficit; the highest total wins.  With
        one line, or mate on the board, the best move is played.  Lines more
        than `2 * weakness` cp below the best are not candidates: even the
        weakest setting does not throw away a rook.
        """
        best_move, best_score = lines[0]
        if len(lines) == 1 or abs(best_score) > 20_000:
            return best_move
        weakness = self.weakness()
        lines = [line for line in lines if best_score - line[1] <= 2 * weakness]
        delta = min(best_score - lines[-1][1], PAWN)
        chosen, chosen_value = best_move, -1 << 30
        for move, score in lines:
            push = (weakness * (best_score - score) + delta * rng.randrange(weakness)) // 128
            if score + push > chosen_value:
                chosen, chosen_value = move, score + push
        return chosen
