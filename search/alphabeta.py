"""Negamax alpha-beta with principal variation search and quiescence.

The search reads and changes one `Position` (or any object with the same
methods, such as the game-tree adapter in the tests), counts nodes, and raises
`SearchAborted` when the driver's limits say stop; the driver then falls back
on the last completed iteration.  Scores are centipawns for the side to move;
mates are `MATE - plies` so that shorter mates score higher.
"""
from __future__ import annotations

from typing import Callable

import chess

from search.features import Features
from search.movegen import promoting_pawns
from search.ordering import MoveOrderer
from search.movepick import staged_moves
from search.position import Position
from search.see import see_at_least
from search.tablebase import Tablebases
from search.tt import TranspositionTable, score_from_tt
from search.types import EXACT, INFINITY, LOWER, MATE, MAX_PLY, PIECE_VALUE, TB_WIN_BOUND, UPPER

#: Quiescence skips a capture when even winning the victim plus this margin
#: cannot lift the score to alpha (delta pruning).
DELTA_MARGIN = 200
#: How many nodes pass between two looks at the clock and the stop flag.
CHECK_EVERY = 64
#: Null-move pruning: least depth to try it; the null-move search is
#: NULL_MOVE_REDUCTION + depth // 6 plies shallower.
NULL_MOVE_MIN_DEPTH = 3
NULL_MOVE_REDUCTION = 2
#: Reverse futility pruning: at depth <= RFP_MAX_DEPTH a static evaluation
#: this many centipawns per ply above beta is trusted to hold.
RFP_MAX_DEPTH = 3
RFP_MARGIN = 90
#: Late move reductions: least depth, first move index reduced by one ply,
#: and index from which quiet moves are reduced by two.
LMR_MIN_DEPTH = 3
LMR_FIRST_MOVE = 3
LMR_DEEPER_MOVE = 8
#: Quiet-move pruning (`Features.quiet_pruning`), at depth <= QUIET_PRUNING_MAX_DEPTH:
#: late move pruning skips the quiet moves after the first LMP_BASE + depth**2
#: of them, futility pruning all of them once static eval + FUTILITY_BASE +
#: FUTILITY_MARGIN * depth <= alpha.
QUIET_PRUNING_MAX_DEPTH = 3
LMP_BASE = 3
FUTILITY_BASE = 80
FUTILITY_MARGIN = 90


class SearchAborted(Exception):
    """Raised inside the tree when the search must stop now."""


class AlphaBeta:
    """One search's worth of tree-walking state (nodes, PV, killers)."""

    def __init__(
        self,
        pos: Position,
        tt: TranspositionTable,
        features: Features = Features(),
        should_stop: Callable[[int], bool] | None = None,
        orderer: MoveOrderer | None = None,
        tablebases: Tablebases | None = None,
    ) -> None:
        self.pos = pos
        self.tt = tt
        self.features = features
        self.should_stop = should_stop
        self.orderer = orderer or MoveOrderer(MAX_PLY)
        self.nodes = 0
        self.seldepth = 0
        # Triangular PV table: pv[ply] is the best line found from that ply.
        self.pv: list[list[chess.Move]] = [[] for _ in range(MAX_PLY + 2)]
        self.tablebases = tablebases
        #: Most pieces at which the tree probes the tablebases (0: never).
        self.tablebase_pieces = tablebases.search_pieces if tablebases is not None else 0
        #: Least remaining depth at which the tree probes: a probe costs several nodes.
        self.tablebase_depth = tablebases.probe_depth if tablebases is not None else 0

    def alphabeta(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Fail-soft negamax value of the current position searched to `depth`."""
        # Count the node and look at the limits every CHECK_EVERY nodes (inlined: a call a node cost 1%).
        nodes = self.nodes = self.nodes + 1
        if not nodes % CHECK_EVERY and self.should_stop is not None and self.should_stop(nodes):
            raise SearchAborted
        pos = self.pos
        features = self.features
        pv = self.pv
        pv[ply] = []
        if ply > self.seldepth:
            self.seldepth = ply

        if ply > 0:
            if pos.is_draw():
                return 0
            if self.tablebase_pieces and pos.board.halfmove_clock == 0 and depth >= self.tablebase_depth:
                score = self._probe_tablebases(ply)
                if score is not None:
                    return score
            # Mate distance pruning: no line from here can beat a mate
            # already found nearer the root.  Never changes the root value.
            if alpha < -MATE + ply:  # (comparisons: builtin max and min cost a call each, at every node)
                alpha = -MATE + ply
            if beta > MATE - ply - 1:
                beta = MATE - ply - 1
            if alpha >= beta:
                return alpha

        in_check = pos.in_check()
        if in_check and features.check_extension:
            depth += 1
        if depth <= 0:
            if features.quiescence:
                return self.quiescence(alpha, beta, ply, in_check)
            return pos.evaluate()
        if ply >= MAX_PLY:
            return pos.evaluate()

        key = pos.key
        hash_move = 0
        pv_node = beta - alpha > 1
        if features.transposition:
            data = self.tt.probe_data(key)
            if data:
                # `search.tt.decode`, inlined: a call at every node costs 2.5 % (see there).
                hash_move = (data >> 27) & 0xFFFF
                if not pv_node and data & 255 >= depth:
                    score = score_from_tt(((data >> 10) & 0x1FFFF) - 65536, ply)
                    bound = (data >> 8) & 3
                    if bound == EXACT or (bound == LOWER and score >= beta) or (bound == UPPER and score <= alpha):
                        return score

        # Quiet moves from this count on are skipped (late move pruning); 0: none is.
        quiets_allowed = 0
        # Pruning on the static evaluation is never tried in check, at PV
        # nodes, or with only king and pawns, where passing may be the best
        # move (zugzwang).
        board = pos.board
        if ((features.null_move or features.quiet_pruning) and not pv_node and not in_check and ply > 0
                and board.occupied_co[board.turn] & ~(board.pawns | board.kings)):
            score, quiets_allowed = self._prune_by_static_eval(depth, alpha, beta, ply)
            if score is not None:
                return score

        original_alpha = alpha
        best_score = -INFINITY
        best_move = None
        pvs = features.pvs
        reduce_late = features.late_move_reductions and depth >= LMR_MIN_DEPTH and not in_check
        # Only these tell quiet moves from captures (the tests' game trees have no board to ask).
        classify = features.ordering or reduce_late or quiets_allowed
        index = -1
        quiets = 0
        orderer = self.orderer if features.ordering else None
        # Quiet moves searched so far that did not cut off (history malus).
        failed_quiets: list[chess.Move] = []
        if classify:  # `board.is_capture`, inlined below: asked of every move
            them, ep, pawns = board.occupied_co[not board.turn], board.ep_square, board.pawns
        gives_check = None  # the node's `Position.quiet_check_test`, made when pruning first asks
        # Once the next quiet move would be skipped unless it gives check, so
        # would every later one: the move picker, told so (its flag), makes
        # the checks alone.  Their place in the move count then no longer
        # matters: a move that gives check is not reduced.
        checks_only = [False] if quiets_allowed else None
        for move in staged_moves(pos, orderer, hash_move if orderer is not None else 0, ply, in_check, checks_only):
            index += 1
            tactical = classify and (move.promotion or (them >> move.to_square) & 1
                                     or move.to_square == ep and (pawns >> move.from_square) & 1)
            if quiets_allowed and not tactical:
                quiets += 1
                # Only once some move has a score that is not a loss: a
                # position where every move was skipped is not mated.
                if quiets >= quiets_allowed and best_score > -TB_WIN_BOUND:
                    if gives_check is None:
                        gives_check = pos.quiet_check_test()[0]
                    if not gives_check(move):
                        checks_only[0] = True
                        continue
            pos.push(move)
            if index == 0 or not pvs:
                score = -self.alphabeta(depth - 1, -beta, -alpha, ply + 1)
            else:
                # Late quiet moves rarely matter: look shallower first.
                reduction = 0
                if reduce_late and index >= LMR_FIRST_MOVE and not tactical and not pos.in_check():
                    reduction = 1 if index < LMR_DEEPER_MOVE else 2
                score = -self.alphabeta(depth - 1 - reduction, -alpha - 1, -alpha, ply + 1)
                if reduction and score > alpha:
                    score = -self.alphabeta(depth - 1, -alpha - 1, -alpha, ply + 1)
                if alpha < score < beta:
                    score = -self.alphabeta(depth - 1, -beta, -alpha, ply + 1)
            pos.pop()
            if score > best_score:
                best_score = score
                best_move = move
                if score > alpha:
                    alpha = score
                    pv[ply] = [move, *pv[ply + 1]]
                    if score >= beta:
                        if features.ordering and not tactical:
                            self.orderer.record_cutoff(board, move, ply, depth, failed_quiets)
                        break
            if checks_only is not None and quiets + 1 >= quiets_allowed and best_score > -TB_WIN_BOUND:
                checks_only[0] = True
            if features.ordering and not tactical:
                failed_quiets.append(move)  # only ordering learns from them

        if index < 0:
            return pos.no_moves_score(ply)
        if features.transposition:
            self._store(key, depth, best_score, original_alpha, beta, best_move, ply)
        return best_score

    def _store(self, key: int, depth: int, score: int, alpha: int, beta: int, move: chess.Move | None, ply: int) -> None:
        """Record a node's result with the bound its window gives it (no move for a fail-low: none was best)."""
        if score >= beta:
            self.tt.store(key, depth, LOWER, score, move, ply)
        elif score > alpha:
            self.tt.store(key, depth, EXACT, score, move, ply)
        else:
            self.tt.store(key, depth, UPPER, score, None, ply)

    def _probe_tablebases(self, ply: int) -> int | None:
        """The tables' verdict on a position just after a capture or pawn move, if they hold it.

        Only there: Syzygy's WDL tables assume a fresh fifty-move count, and
        probing every node would cost far more than it saves.
        """
        board = self.pos.board
        if chess.popcount(board.occupied) > self.tablebase_pieces:
            return None
        assert self.tablebases is not None
        return self.tablebases.probe_score(board, ply)

    def _prune_by_static_eval(self, depth: int, alpha: int, beta: int, ply: int) -> tuple[int | None, int]:
        """(A fail-high score without searching the moves, or None; how many quiet moves may be searched, 0: all).

        Reverse futility: near the horizon, a static evaluation far above
        beta will not be pulled down in the few plies left.  Null move:
        if passing and searching shallower still fails high, a real move
        (almost always better than passing) would too.  Quiet-move pruning:
        near the horizon only the first few quiet moves are searched (late
        move pruning), just one when even a margin cannot lift the static
        evaluation to alpha (futility); the move loop keeps those that give
        check.  The caller leaves out PV nodes, checks and positions with
        only king and pawns (zugzwang); the null move is not made twice in a
        row, nor near mate scores.
        """
        pos = self.pos
        features = self.features
        static = pos.evaluate()
        if features.null_move and abs(beta) < TB_WIN_BOUND:
            if depth <= RFP_MAX_DEPTH and static - RFP_MARGIN * depth >= beta:
                return static, 0
            move_stack = pos.board.move_stack
            if depth >= NULL_MOVE_MIN_DEPTH and static >= beta and move_stack and move_stack[-1]:
                pos.push_null()
                score = -self.alphabeta(depth - 1 - NULL_MOVE_REDUCTION - depth // 6, -beta, -beta + 1, ply + 1)
                pos.pop()
                if score >= beta:
                    return (beta if score >= TB_WIN_BOUND else score), 0
        if features.quiet_pruning and depth <= QUIET_PRUNING_MAX_DEPTH:
            if static + FUTILITY_BASE + FUTILITY_MARGIN * depth <= alpha:
                return None, 1
            return None, LMP_BASE + depth * depth + 1
        return None, 0

    def quiescence(self, alpha: int, beta: int, ply: int, in_check: bool | None = None) -> int:
        """Resolve captures (and evasions when in check) until the position is quiet.

        The side to move may "stand pat" on the static evaluation instead of
        capturing, except in check, where every evasion is searched so that
        mates at the horizon are seen.  `in_check`: whether the side to move
        is in check, if the caller knows (None: asked here).
        """
        nodes = self.nodes = self.nodes + 1  # (as in `alphabeta`)
        if not nodes % CHECK_EVERY and self.should_stop is not None and self.should_stop(nodes):
            raise SearchAborted
        pos = self.pos
        self.pv[ply] = []
        if ply > self.seldepth:
            self.seldepth = ply
        if ply >= MAX_PLY:
            return pos.evaluate()

        board = pos.board
        if in_check is None:
            in_check = pos.in_check()
        if in_check:
            moves = pos.legal_moves(True)
            if not moves:
                return -MATE + ply
            best_score = -INFINITY
            stand_pat = -INFINITY
            if self.features.ordering:
                moves = self.orderer.order(board, moves, 0, ply, mailbox=pos.mailbox)
        else:
            stand_pat = pos.evaluate()
            if stand_pat >= beta:
                return stand_pat
            best_score = stand_pat
            if stand_pat > alpha:
                alpha = stand_pat
            if (self.features.delta_pruning and stand_pat + _best_victim(board) + DELTA_MARGIN <= alpha
                    and not promoting_pawns(board)):
                return best_score  # delta pruning would skip every capture below: generate none
            moves = pos.tactical_moves()
            if self.features.ordering:
                moves = self.orderer.order_captures(board, moves, pos.mailbox)

        delta = self.features.delta_pruning and not in_check
        losing = self.features.see_pruning and not in_check
        mailbox = pos.mailbox
        for move in moves:
            if (delta or losing) and not move.promotion:
                # Out of check every move here is a capture; no victim on the square: en passant.
                victim = mailbox[move.to_square] or chess.PAWN
                if delta and stand_pat + PIECE_VALUE[victim] + DELTA_MARGIN <= alpha:
                    continue
                # Only a capture of a cheaper piece can lose the exchange.
                if losing and PIECE_VALUE[mailbox[move.from_square]] > PIECE_VALUE[victim] and not see_at_least(board, move, 0, mailbox):
                    continue
            pos.push(move)
            score = -self.quiescence(-beta, -alpha, ply + 1)
            pos.pop()
            if score > best_score:
                best_score = score
                if score > alpha:
                    alpha = score
                    self.pv[ply] = [move, *self.pv[ply + 1]]
                    if score >= beta:
                        break
        return best_score


def _best_victim(board: chess.Board) -> int:
    """The value of the side to move's most valuable capture target: the bound delta pruning tests every capture against."""
    them = board.occupied_co[not board.turn]
    if board.queens & them:
        return PIECE_VALUE[chess.QUEEN]
    if board.rooks & them:
        return PIECE_VALUE[chess.ROOK]
    if board.bishops & them:
        return PIECE_VALUE[chess.BISHOP]
    if board.knights & them:
        return PIECE_VALUE[chess.KNIGHT]
    return PIECE_VALUE[chess.PAWN] if board.pawns & them else 0
