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

The mapping from the requested Elo to these knobs is calibrated by matches
against Stockfish's own `UCI_Elo` ladder; docs/strength-limit.md has the runs.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

import chess

from search.types import PAWN_VALUE, is_decisive

#: The range offered as UCI_Elo.  The top is full strength: a request of
#: ELO_MAX plays as if UCI_LimitStrength were off (`limit_for`), about 2100
#: on Stockfish's scale at 10+0.1 with the net (docs/strength.md).  Below
#: it the evaluation's calibration gives the node budget, up to the top
#: setting (requests from about 2020 with the net, from about 1730
#: without it); docs/strength-limit.md has the points measured in games.
ELO_MIN = 1000
ELO_MAX = 2100
#: Lines searched to choose from.
CANDIDATE_LINES = 4
#: The knobs are functions of a "setting" on a nominal Elo scale: the node
#: budget is BASE_NODES at setting 1000 and doubles every ELO_PER_DOUBLING.
BASE_NODES = 64
ELO_PER_DOUBLING = 125
SETTING_MIN, SETTING_MAX = 1000, 2000
#: Calibration of the classical evaluation: two points on the least-squares
#: line (setting -> Stockfish-scale Elo) through four 100-game matches against
#: Stockfish 15.1's UCI_Elo ladder (docs/strength-limit.md, step 6).  A
#: requested Elo is turned into a setting by the line of the evaluation in use.
CALIBRATION = ((1350, 1280), (1700, 1464))
#: The net's own calibration: (setting, Stockfish-scale Elo) points of
#: 100-game matches with the bundled net against Stockfish 15.1's UCI_Elo
#: (docs/strength-limit.md), joined by straight lines (`setting_for`).  Each
#: doubling of nodes is worth less the more there are: 1.25 Elo a setting
#: unit between the first two points (more than twice the classical line's
#: 0.53), 0.55 between the last two.
NNUE_CALIBRATION = ((1238, 1381), (1350, 1521), (1479, 1627), (1838, 1823))
#: Settings are kept within SETTING_MARGIN of the nominal scale: the top,
#: 2200 (49,667 nodes), is about the classical engine's full strength
#: (docs/strength-limit.md, step 6), and the bottom keeps the extrapolation
#: near the measured points.  Chosen with the calibration (ea3df77), not
#: measured.
SETTING_MARGIN = 200
#: Least node budget per move, whatever the setting: a floor set with the
#: first version (1905ab8), below what the UCI_Elo range asks (about 23
#: nodes at 1000); depth 1 is finished in any case (`Limits.min_depth`).
MIN_NODES = 16
#: Weakness (Stockfish's skill-level "weakness") at the strongest and the
#: weakest setting.  Stockfish's runs from 120 (level 0) down to 80 (level
#: 19); the top is Stockfish's, the bottom, 10, lets even the strongest
#: setting stray a little between near-equal lines (first version, 1905ab8).
WEAKNESS_MIN, WEAKNESS_MAX = 10, 120
#: Stockfish's divisor in its skill "magic formula": a push of weakness / 128
#: of a line's deficit never lifts a worse line above the best on its own,
#: as long as the weakness stays below it.
PUSH_SCALE = 128


def setting_for(elo: int, calibration: Sequence[tuple[int, int]] = CALIBRATION) -> float:
    """The nominal setting that plays at `elo`: on the straight line between the two calibration points
    around it, and beyond the first or last point along the nearest segment."""
    points = sorted(calibration)
    for (s1, e1), (s2, e2) in zip(points, points[1:]):
        if elo <= e2:
            break
    return s1 + (elo - e1) * (s2 - s1) / (e2 - e1)


@dataclass(frozen=True)
class StrengthLimit:
    """Search settings for a requested Elo, searching with the net (`learned`) or the classical evaluation.

    Both calibrations stay above the weakest setting across the range
    (ELO_MIN is setting 933 on the net's, 817 on the classical one).
    `limit_for` leaves the top unlimited.
    """

    elo: int
    learned: bool = False

    @property
    def _setting(self) -> float:
        calibration = NNUE_CALIBRATION if self.learned else CALIBRATION
        setting = setting_for(min(max(self.elo, ELO_MIN), ELO_MAX), calibration)
        return min(max(setting, SETTING_MIN - SETTING_MARGIN), SETTING_MAX + SETTING_MARGIN)

    def nodes(self) -> int:
        """Node budget per move."""
        return max(MIN_NODES, round(BASE_NODES * 2 ** ((self._setting - SETTING_MIN) / ELO_PER_DOUBLING)))

    def weakness(self) -> int:
        """Stockfish-style weakness: 0 plays the best line, larger pushes harder."""
        span = SETTING_MAX - SETTING_MIN
        fraction = (SETTING_MAX - min(max(self._setting, SETTING_MIN), SETTING_MAX)) / span
        return round(WEAKNESS_MIN + (WEAKNESS_MAX - WEAKNESS_MIN) * fraction)

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
        if len(lines) == 1 or is_decisive(best_score):
            return best_move
        weakness = self.weakness()
        lines = [line for line in lines if best_score - line[1] <= 2 * weakness]
        delta = min(best_score - lines[-1][1], PAWN_VALUE)
        chosen, chosen_value = best_move, -1 << 30
        for move, score in lines:
            push = (weakness * (best_score - score) + delta * rng.randrange(weakness)) // PUSH_SCALE
            if score + push > chosen_value:
                chosen, chosen_value = move, score + push
        return chosen


def limit_for(elo: int, learned: bool = False) -> StrengthLimit | None:
    """The limit that plays a requested UCI_Elo; None (no limit) at ELO_MAX, which is full strength."""
    return None if elo >= ELO_MAX else StrengthLimit(elo, learned)
