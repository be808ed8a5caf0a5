"""Staged move generation (Stockfish's `movepick`): the moves of a node, best first, made only as needed.

Alpha-beta prunes most when the best move comes first, and in Python,
generating and ordering moves is most of a node's cost.  So the moves come
in stages, each generated only when the one before has not refuted the
position:

1. the hash move (from the transposition table), tried before any other
   move is generated: it often refutes the position on its own;
2. captures and promotions that do not lose material, by MVV-LVA;
3. quiet moves: killers, countermove, then by history;
4. captures that lose material by static exchange.

When a capture refutes the position, the quiet moves (most of them) are
never generated.  In check, or without ordering, all moves come at once:
evasions are few.  The scores and the tables they learn from are
`search.ordering.MoveOrderer`'s.
"""
from __future__ import annotations

from typing import Iterator

import chess

from search.ordering import MoveOrderer
from search.movegen import legal_moves, promoting_pawns
from search.position import Position
from search.tt import decode_move, encode_move


def staged_moves(pos: Position, orderer: MoveOrderer | None, hash_move: int, ply: int,
                 in_check: bool, checks_only: list[bool] | None = None) -> Iterator[chess.Move]:
    """The legal moves of `pos`, best first, generated lazily in stages.

    `hash_move` is a move code (`search.tt.encode_move`), 0 for none;
    `orderer` None (no ordering, as in the exact minimax mode) gives the
    moves in generation order, all at once.  `checks_only`: a flag the
    caller sets once it will skip every further quiet move that gives no
    check (futility and late move pruning); if it is set when the quiet
    stage starts, only the checks are generated, and if it is set during
    the stage, only the checks of the rest are yielded, each in the order
    it has among all.
    """
    board, mailbox = pos.board, pos.mailbox
    if hash_move:
        candidate = decode_move(hash_move)
        if candidate is not None and board.is_legal(candidate):
            yield candidate
        else:
            hash_move = 0  # a stale or colliding entry
    if in_check or orderer is None:
        moves = pos.legal_moves(in_check)
        if orderer is None:
            yield from _without(moves, hash_move)
        else:
            yield from orderer.order(board, moves, hash_move, ply, skip_hash=True, mailbox=mailbox)
        return

    # Each stage's list is made without the hash move (searched above).
    good, bad = orderer.split_tactical(board, pos.tactical_moves(underpromotions=True), ply, hash_move, mailbox)
    yield from good
    if checks_only is None:
        yield from orderer.order_quiets(board, quiet_moves(board), hash_move, ply)
    elif checks_only[0]:
        gives_check, reach = pos.quiet_check_test()
        quiets = [move for move in quiet_moves(board, reach) if gives_check(move)]
        # Sorting is stable, so a subset keeps the order it has among all the quiet moves.
        yield from orderer.order_quiets(board, quiets, hash_move, ply)
    else:
        quiets = orderer.order_quiets(board, quiet_moves(board), hash_move, ply)
        for index, move in enumerate(quiets):
            if checks_only[0]:  # set while the moves before were searched: the rest, checks alone
                gives_check = pos.quiet_check_test()[0]
                yield from [later for later in quiets[index:] if gives_check(later)]
                break
            yield move
    yield from bad


def quiet_moves(board: chess.Board, to_mask: chess.Bitboard = chess.BB_ALL) -> list[chess.Move]:
    """The legal moves that neither capture nor promote, landing on `to_mask`, in python-chess's order (not in check)."""
    # python-chess generates castling by the rook's square: keep ours in the mask.
    quiets = legal_moves(board, ~promoting_pawns(board),
                         (~board.occupied | board.castling_rights & board.occupied_co[board.turn]) & to_mask)
    ep = board.ep_square
    if ep is not None:  # only an en-passant capture (staged above) lands on the ep square
        pawns = board.pawns
        quiets = [move for move in quiets if move.to_square != ep or not (pawns >> move.from_square) & 1]
    return quiets


def _without(moves: list[chess.Move], code: int) -> Iterator[chess.Move]:
    """`moves` except the one with move code `code` (the hash move, already searched)."""
    if not code:
        yield from moves
        return
    for move in moves:
        if encode_move(move) != code:
            yield move
