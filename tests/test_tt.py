"""Transposition table: packing round-trips, replacement, bounded size."""
from __future__ import annotations

import chess
import pytest
from hypothesis import given
from hypothesis import strategies as st

from search.tt import TranspositionTable, decode_move, encode_move, score_from_tt
from search.types import EXACT, LOWER, MATE, UPPER

moves = st.builds(
    chess.Move,
    st.integers(0, 63),
    st.integers(0, 63),
    st.sampled_from([None, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN]),
).filter(lambda m: m.from_square != m.to_square)


@given(
    key=st.integers(0, 2**64 - 1),
    depth=st.integers(1, 120),
    bound=st.sampled_from([EXACT, LOWER, UPPER]),
    score=st.one_of(st.integers(-3000, 3000), st.integers(MATE - 200, MATE), st.integers(-MATE, -MATE + 200)),
    move=st.one_of(st.none(), moves),
    ply=st.integers(0, 99),
)
def test_store_then_probe_round_trips(key, depth, bound, score, move, ply) -> None:
    table = TranspositionTable(1)
    table.store(key, depth, bound, score, move, ply)
    entry = table.probe(key)
    assert entry is not None
    assert (entry.depth, entry.bound, score_from_tt(entry.score, ply), entry.move) == (depth, bound, score, move)
    assert table.probe(key ^ (1 << 63)) is None  # same slot, other key


@given(move=moves)
def test_move_codes_round_trip(move) -> None:
    assert decode_move(encode_move(move)) == move
    assert encode_move(move) != 0


def test_mate_scores_are_stored_relative_to_the_node() -> None:
    table = TranspositionTable(1)
    table.store(42, 5, EXACT, MATE - 7, None, ply=4)  # mate in 3 plies from this node
    assert score_from_tt(table.probe(42).score, ply=2) == MATE - 5


def test_upper_bound_keeps_the_known_move() -> None:
    table = TranspositionTable(1)
    move = chess.Move.from_uci("e2e4")
    table.store(7, 3, LOWER, 50, move, 0)
    table.store(7, 4, UPPER, -20, None, 0)
    assert table.probe(7).move == move and table.probe(7).bound == UPPER


def test_deeper_entry_of_this_search_survives_a_colliding_shallow_one() -> None:
    table = TranspositionTable(1)
    size = table.mask + 1
    table.store(5, 9, EXACT, 1, None, 0)
    table.store(5 + size, 2, EXACT, 2, None, 0)  # same slot
    assert table.probe(5) is not None and table.probe(5 + size) is None
    table.new_search()  # old entries give way in a new search
    table.store(5 + size, 2, EXACT, 2, None, 0)
    assert table.probe(5 + size) is not None


@pytest.mark.parametrize("megabytes", [1, 16, 64, 256])
def test_slot_count_fits_the_hash_setting(megabytes: int) -> None:
    table = TranspositionTable(megabytes)
    slots = table.mask + 1
    assert slots & table.mask == 0  # power of two
    assert slots * 88 <= megabytes * 1024 * 1024 < slots * 2 * 88 or slots == 1024


def test_hashfull_and_clear() -> None:
    table = TranspositionTable(1)
    for key in range(table.mask + 1):
        table.store(key, 1, EXACT, 0, None, 0)
    assert table.hashfull() == 1000
    table.clear()
    assert table.hashfull() == 0 and table.probe(3) is None


def test_layout_matches_the_inline_unpacking_in_alphabeta() -> None:
    """search.alphabeta reads depth, bound, score and move with literal shifts."""
    from search import tt

    assert (tt._BOUND_SHIFT, tt._SCORE_SHIFT, tt._MOVE_SHIFT, tt._SCORE_OFFSET) == (8, 10, 27, 65536)
