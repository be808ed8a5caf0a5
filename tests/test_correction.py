"""Correction history (`search.correction`): the running miss of the static evaluation by pawn structure."""
from __future__ import annotations

import chess

from search.correction import MAX_CORRECTION, CorrectionHistory, pawn_index
from search.driver import Searcher
from search.features import Features
from search.timeman import Limits

MIDDLEGAME = chess.Board("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N2N2/PP2BPPP/R2QKB1R w KQ - 0 9")


def test_the_index_follows_the_pawns_alone() -> None:
    board = MIDDLEGAME.copy()
    index = pawn_index(board)
    board.push_uci("f3e5")  # a knight move leaves the structure
    assert pawn_index(board) == index
    board.push_uci("c6e5")  # a capture of a knight too
    assert pawn_index(board) == index
    board.push_uci("d4e5")  # a pawn capture changes it
    assert pawn_index(board) != index
    # The same squares with the colours swapped are another structure.
    assert pawn_index(chess.Board("8/8/8/3p4/8/8/3P4/k6K w - - 0 1")) != pawn_index(chess.Board("8/8/8/3P4/8/8/3p4/k6K w - - 0 1"))


def test_the_correction_moves_toward_the_miss_and_stays_bounded() -> None:
    history = CorrectionHistory()
    assert history.correction(chess.WHITE, 5) == 0
    for _ in range(200):
        history.update(chess.WHITE, 5, 60, depth=8)
    assert 50 <= history.correction(chess.WHITE, 5) <= 60  # the average reaches the steady miss
    assert history.correction(chess.BLACK, 5) == 0 and history.correction(chess.WHITE, 6) == 0
    for _ in range(500):
        history.update(chess.BLACK, 5, -10_000, depth=20)
    assert history.correction(chess.BLACK, 5) == -MAX_CORRECTION
    deeper, shallower = CorrectionHistory(), CorrectionHistory()
    deeper.update(chess.WHITE, 1, 100, depth=10)
    shallower.update(chess.WHITE, 1, 100, depth=1)
    assert deeper.tables[chess.WHITE][1] > shallower.tables[chess.WHITE][1] > 0  # a deeper result weighs more
    history.clear()
    assert not any(history.tables[chess.WHITE]) and not any(history.tables[chess.BLACK])


def test_a_search_learns_corrections_and_clear_forgets_them() -> None:
    searcher = Searcher(1)
    first = searcher.search(MIDDLEGAME, Limits(depth=4))
    learnt = sum(1 for table in searcher.corrections.tables for entry in table if entry)
    assert learnt > 0
    searcher.clear()
    assert not any(entry for table in searcher.corrections.tables for entry in table)
    again = searcher.search(MIDDLEGAME, Limits(depth=4))
    assert (again.nodes, again.score, again.pv) == (first.nodes, first.score, first.pv)


def test_the_exact_search_neither_reads_nor_learns_corrections() -> None:
    searcher = Searcher(1, features=Features.exact())
    searcher.search(MIDDLEGAME, Limits(depth=3))
    assert not any(entry for table in searcher.corrections.tables for entry in table)


def test_small_entries_round_alike_on_both_sides() -> None:
    history = CorrectionHistory()
    history.tables[chess.WHITE][3], history.tables[chess.BLACK][3] = 100, -100  # under half a centipawn
    assert history.correction(chess.WHITE, 3) == history.correction(chess.BLACK, 3) == 0
    for _ in range(1000):  # misses of zero pull both back alike
        history.update(chess.WHITE, 3, 0, depth=20)
        history.update(chess.BLACK, 3, 0, depth=20)
    assert history.tables[chess.WHITE][3] == -history.tables[chess.BLACK][3]
