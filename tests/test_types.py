"""The score vocabulary (search/types.py): bounds derived from each other, with room to spare."""
from __future__ import annotations

import chess

from search.syzygy import FIFTY_MOVE_PLIES
from search.types import (ATTACKER_RANK, EXACT, INFINITY, LOWER, MATE, MATE_BOUND, MATE_PLIES, MAX_PLY, PIECE_VALUE,
                          TB_WIN, TB_WIN_BOUND, TB_WIN_PLIES, UPPER, is_decisive, mate_in, uci_score)


def test_the_score_bands_are_ordered_and_leave_room() -> None:
    # Mates found in the search (under MAX_PLY plies) are all above MATE_BOUND,
    # tablebase wins from any node above TB_WIN_BOUND, and both below INFINITY.
    assert MATE_PLIES > MAX_PLY
    assert TB_WIN_PLIES >= MAX_PLY + FIFTY_MOVE_PLIES
    assert TB_WIN_BOUND < TB_WIN < MATE_BOUND < MATE < INFINITY
    assert MATE - MAX_PLY > MATE_BOUND and TB_WIN - MAX_PLY - FIFTY_MOVE_PLIES > TB_WIN_BOUND


def test_mate_in_counts_moves() -> None:
    assert mate_in(MATE - 1) == 1 and mate_in(MATE - 3) == 2
    assert mate_in(-MATE) == 0 and mate_in(-(MATE - 2)) == -1
    assert mate_in(TB_WIN) is None and mate_in(35) is None
    assert is_decisive(TB_WIN - MAX_PLY) and is_decisive(-(MATE - 4)) and not is_decisive(3000)


def test_uci_score() -> None:
    assert uci_score(35) == "cp 35"
    assert uci_score(MATE - 5, LOWER) == "mate 3 lowerbound"
    assert uci_score(-(MATE - 4), UPPER) == "mate -2 upperbound"
    assert uci_score(-12, EXACT) == "cp -12"


def test_the_victim_decides_before_the_attacker() -> None:
    # MVV-LVA: the smallest step between two victims' values outweighs the
    # largest difference between two attackers' ranks.
    victims = sorted(PIECE_VALUE[chess.PAWN:chess.KING])
    assert min(b - a for a, b in zip(victims, victims[1:])) > max(ATTACKER_RANK) - min(ATTACKER_RANK[1:])
