"""Move ordering: the order `MoveOrderer.order` promises in its docstring."""
from __future__ import annotations

import random

import chess

from search.movepick import quiet_moves
from search.ordering import MoveOrderer
from search.tt import encode_move

# White to move.  Nxe4 is an even trade (dxe4); Nxd5 and Qxd5 take a pawn
# that e6 defends, so they lose the piece for it.
FEN = "4k3/8/4p3/3p4/4n3/2N5/8/3QK3 w - - 0 1"


def order(orderer: MoveOrderer, board: chess.Board, hash_move: chess.Move | None = None) -> list[str]:
    moves = list(board.legal_moves)
    return [m.uci() for m in orderer.order(board, moves, encode_move(hash_move), 1)]


def test_hash_move_first_then_good_captures_then_quiets_then_losing_captures() -> None:
    board = chess.Board(FEN)
    ordered = order(MoveOrderer(), board, chess.Move.from_uci("e1e2"))
    assert ordered[0] == "e1e2"
    assert ordered[1] == "c3e4"
    assert ordered[-2:] == ["c3d5", "d1d5"]  # the cheaper loss first


def test_killers_then_countermove_before_other_quiets() -> None:
    board = chess.Board(FEN)
    orderer = MoveOrderer()
    orderer.record_cutoff(board, chess.Move.from_uci("c3b5"), 1, 3)
    orderer.record_cutoff(board, chess.Move.from_uci("c3a4"), 1, 3)
    ordered = order(orderer, board)
    assert ordered[1:3] == ["c3a4", "c3b5"]  # after the capture, newest killer first

    # A countermove belongs to the opponent's previous move, not to a ply,
    # and outranks any history score.
    orderer = MoveOrderer()
    orderer.record_cutoff(board, chess.Move.from_uci("d1d3"), 6, 10)  # history 100
    board.push_san("Ke2")
    board.push_san("Kd7")
    orderer.record_cutoff(board, chess.Move.from_uci("c3b5"), 5, 3)  # history 9
    ordered = order(orderer, board)  # ply 1: no killers here
    assert ordered[:3] == ["c3e4", "c3b5", "d1d3"]
    board.pop()
    board.push_san("Kf7")  # another previous move: no countermove known
    assert order(orderer, board)[:3] == ["c3e4", "d1d3", "c3b5"]


def test_failed_quiet_moves_lose_history() -> None:
    board = chess.Board(FEN)
    orderer = MoveOrderer()
    failed = [chess.Move.from_uci("e1f1"), chess.Move.from_uci("e1e2")]
    orderer.record_cutoff(board, chess.Move.from_uci("c3b5"), 3, 4, failed)
    history = orderer.history[chess.WHITE]
    assert history[chess.C3 * 64 + chess.B5] == 16
    assert history[chess.E1 * 64 + chess.F1] == -16
    ordered = order(orderer, board)
    # Never-tried quiet moves (history 0) come before the ones that failed,
    # and those still before the losing capture.
    assert ordered.index("d1d3") < ordered.index("e1f1") < ordered.index("d1d5")


def test_the_quiet_stages_ordering_is_the_full_orderings() -> None:
    """`order_quiets` (the quiet stage's hot path) gives the quiet moves in the order `order` gives them,
    hash move left out, over random games with killers, countermoves and history learned on the way."""
    rng = random.Random(7)
    orderer = MoveOrderer()
    compared = 0
    for _ in range(30):
        board = chess.Board()
        for ply in range(80):
            moves = list(board.legal_moves)
            if not moves:
                break
            quiets = quiet_moves(board) if not board.is_check() else []
            hash_move = encode_move(rng.choice(quiets)) if quiets and rng.random() < 0.5 else 0
            if quiets:
                expected = orderer.order(board, quiets, hash_move, ply % 8, skip_hash=True)
                assert orderer.order_quiets(board, quiets, hash_move, ply % 8) == expected, board.fen()
                compared += 1
                for move in rng.sample(quiets, min(3, len(quiets))):  # lessons: killers, countermove, history
                    orderer.record_cutoff(board, move, ply % 8, rng.randrange(1, 8), rng.sample(quiets, 1))
            board.push(rng.choice(moves))
    assert compared > 1000
