"""Move ordering: hash move, captures by MVV-LVA, killers, history, losing captures.

Alpha-beta prunes most when the best move comes first.  The hash move (best
move stored by an earlier iteration or transposition) is tried first; then
captures, most valuable victim first and least valuable attacker first among
equal victims; then the two killer moves of this ply (quiet moves that caused
a cutoff in a sibling); then the countermove (the quiet move that last refuted
the opponent's previous move, wherever it was played); then quiet moves by
their history score; last the captures that lose material by static exchange
evaluation (`search.see`).  History learns from both sides of a cutoff: the
move that refuted gains, the quiet moves tried before it (and failed) lose.
"""
from __future__ import annotations

from operator import itemgetter
from typing import Sequence

import chess

from search.see import see_at_least
from search.tt import encode_move
from search.types import ATTACKER_RANK, MAX_PLY, PIECE_VALUE, Mailbox, mailbox_of

#: The score of a (score, move) pair: a C-level key for the hot sorts (a Python function costs a call per move).
_first = itemgetter(0)

HASH_MOVE = 1 << 30
CAPTURE = 1 << 24
PROMOTION = 1 << 23
KILLER_1 = 1 << 22
KILLER_2 = KILLER_1 - 1
COUNTER = KILLER_1 - 2
HISTORY_MAX = 1 << 20
#: Captures that lose material by static exchange go after the quiet moves
#: (below any history score, which the malus can make negative).
BAD_CAPTURE = -(1 << 22)


class MoveOrderer:
    """Killer and history tables for one search; `order` sorts a move list."""

    def __init__(self, max_ply: int = MAX_PLY) -> None:
        # Killers as move codes (see `search.tt.encode_move`); 0 = none.
        self.killers: list[list[int]] = [[0, 0] for _ in range(max_ply + 1)]
        # history[color][from*64+to]
        self.history: list[list[int]] = [[0] * 4096, [0] * 4096]
        # countermoves[previous from*64+to] = move code of the refutation.
        self.countermoves: list[int] = [0] * 4096

    def clear(self) -> None:
        for pair in self.killers:
            pair[0] = pair[1] = 0
        self.history = [[0] * 4096, [0] * 4096]
        self.countermoves = [0] * 4096

    def age(self) -> None:
        """Halve history between searches so old lessons fade."""
        for table in self.history:
            for index, value in enumerate(table):
                if value:
                    table[index] = value >> 1

    def order(self, board: chess.Board, moves: list[chess.Move], hash_move: int, ply: int,
              skip_hash: bool = False, mailbox: Mailbox | None = None) -> list[chess.Move]:
        """Return `moves` best-first; `hash_move` is a move code, 0 for none.

        With `skip_hash`, the hash move is left out (it was searched before
        the list was made): it scores above all others, so it can only be first.
        `mailbox`: the piece type on each square, if the caller keeps one
        (the search's `Position.mailbox`); else it is read from the board.
        """
        scored = self.scored(board, moves, hash_move, ply, mailbox)
        if skip_hash and scored and scored[0][0] == HASH_MOVE:
            del scored[0]
        return [move for _, move in scored]

    def split_tactical(self, board: chess.Board, moves: list[chess.Move], ply: int, hash_move: int = 0,
                       mailbox: Mailbox | None = None) -> tuple[list[chess.Move], list[chess.Move]]:
        """Captures and promotions as (good best-first, losing best-first), the hash move left out.

        For staged generation: the good ones are searched before the quiet
        moves are even generated, the losing ones after the quiet moves.
        """
        good = []
        bad = []
        for score, move in self.scored(board, moves, hash_move, ply, mailbox):
            if score != HASH_MOVE:
                (good if score >= 0 else bad).append(move)
        return good, bad

    def scored(self, board: chess.Board, moves: list[chess.Move], hash_move: int, ply: int,
               mailbox: Mailbox | None = None) -> list[tuple[int, chess.Move]]:
        """(score, move) pairs, best first.

        Captures score by MVV-LVA: the victim's `PIECE_VALUE` less the
        attacker's `ATTACKER_RANK`, so PxQ > QxQ > PxR.

        Hot path: moves are compared by integer code, not `chess.Move`
        equality (a dataclass comparison costs several times more).
        """
        them = board.occupied_co[not board.turn]
        if mailbox is None:
            mailbox = mailbox_of(board)
        killer_1, killer_2 = self.killers[ply]
        history = self.history[board.turn]
        ep = board.ep_square
        counter = self._countermove(board)
        scored = []
        for move in moves:
            to = move.to_square
            code = move.from_square | to << 6 | (move.promotion or 0) << 12
            if code == hash_move:
                score = HASH_MOVE
            elif (them >> to) & 1:
                victim, attacker = mailbox[to], mailbox[move.from_square]
                losing = PIECE_VALUE[attacker] > PIECE_VALUE[victim] and not see_at_least(board, move, 0, mailbox)
                score = (BAD_CAPTURE if losing else CAPTURE) + PIECE_VALUE[victim] - ATTACKER_RANK[attacker]
            elif move.promotion:
                score = PROMOTION + move.promotion
            elif to == ep and mailbox[move.from_square] == chess.PAWN:
                score = CAPTURE + PIECE_VALUE[chess.PAWN] - ATTACKER_RANK[chess.PAWN]
            elif code == killer_1:
                score = KILLER_1
            elif code == killer_2:
                score = KILLER_2
            elif code == counter:
                score = COUNTER
            else:
                score = history[move.from_square * 64 + to]
            scored.append((score, move))
        scored.sort(key=_first, reverse=True)
        return scored

    def order_quiets(self, board: chess.Board, moves: list[chess.Move], hash_move: int, ply: int) -> list[chess.Move]:
        """`order(board, moves, hash_move, ply, skip_hash=True)` for moves that neither capture nor promote.

        The quiet stage's moves: `scored` less its tests for captures,
        promotions and en passant, which none of them passes (hot path).
        """
        killer_1, killer_2 = self.killers[ply]
        history = self.history[board.turn]
        counter = self._countermove(board)
        scored = []
        append = scored.append
        for move in moves:
            frm = move.from_square
            to = move.to_square
            code = frm | to << 6
            if code == hash_move:
                continue
            if code == killer_1:
                score = KILLER_1
            elif code == killer_2:
                score = KILLER_2
            elif code == counter:
                score = COUNTER
            else:
                score = history[frm * 64 + to]
            append((score, move))
        scored.sort(key=_first, reverse=True)
        return [move for _, move in scored]

    def order_captures(self, board: chess.Board, moves: list[chess.Move], mailbox: Mailbox | None = None) -> list[chess.Move]:
        """MVV-LVA only: quiescence has no hash move and no quiet moves."""
        if mailbox is None:
            mailbox = mailbox_of(board)
        scored = []
        for move in moves:
            victim = mailbox[move.to_square] or (chess.QUEEN if move.promotion else chess.PAWN)
            scored.append((PIECE_VALUE[victim] - ATTACKER_RANK[mailbox[move.from_square]], move))
        scored.sort(key=_first, reverse=True)
        return [move for _, move in scored]

    def _countermove(self, board: chess.Board) -> int:
        """Move code of the remembered answer to the opponent's last move, 0 for none."""
        index = _last_move_index(board)
        return self.countermoves[index] if index >= 0 else 0

    def record_cutoff(self, board: chess.Board, move: chess.Move, ply: int, depth: int,
                      failed: Sequence[chess.Move] = ()) -> None:
        """A quiet move refuted the opponent's play: remember it as killer, countermove and in history.

        `failed` are the quiet moves searched before it at this node: they
        did not refute, so their history falls by what the refutation gains
        (otherwise a move that is often tried, and so often succeeds
        somewhere, would rise above one that succeeds whenever tried).
        """
        pair = self.killers[ply]
        code = encode_move(move)
        if pair[0] != code:
            pair[1] = pair[0]
            pair[0] = code
        last = _last_move_index(board)
        if last >= 0:
            self.countermoves[last] = code
        table = self.history[board.turn]
        bonus = depth * depth
        for quiet in failed:
            index = quiet.from_square * 64 + quiet.to_square
            table[index] = max(table[index] - bonus, -HISTORY_MAX)
        index = move.from_square * 64 + move.to_square
        table[index] += bonus
        if table[index] > HISTORY_MAX:
            for i, value in enumerate(table):
                table[i] = value >> 1


def _last_move_index(board: chess.Board) -> int:
    """from*64+to of the move that led here (the countermove table's index); -1 for none or a null move."""
    if not board.move_stack:
        return -1
    last = board.move_stack[-1]
    return last.from_square * 64 + last.to_square if last else -1
