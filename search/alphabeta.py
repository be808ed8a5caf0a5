"""Negamax alpha-beta with principal variation search and quiescence.

The search reads and changes one `Position` (or any object with the same
methods, such as the game-tree adapter in the tests), counts nodes, and raises
`SearchAborted` when the driver's limits say stop; the driver then falls back
on the last completed iteration.  Scores are centipawns for the side to move;
mates are `MATE - plies` so that shorter mates score higher.
"""
from __future__ import annotations

import math
from typing import Callable

import chess

from search.features import Features
from search.movegen import promoting_pawns
from search.ordering import MoveOrderer
from search.movepick import staged_moves
from search.position import Position
from search.see import see
from search.tablebase import Tablebases
from search.tt import TranspositionTable, decode, encode_move, score_from_tt
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
#: `Features.deep_rfp`: reverse futility pruning up to this depth.
RFP_DEEP_MAX_DEPTH = 6
#: `Features.adaptive_null_move`: the null-move search is
#: NULL_MOVE_REDUCTION + 1 + depth // 3 plies shallower, plus one ply for
#: every NULL_MOVE_EVAL_STEP centipawns the static evaluation stands above
#: beta, at most NULL_MOVE_EVAL_PLIES: the surer the cut, the less it costs.
NULL_MOVE_EVAL_STEP = 200
NULL_MOVE_EVAL_PLIES = 2
#: Late move reductions: least depth, first move index reduced by one ply,
#: and index from which quiet moves are reduced by two.
LMR_MIN_DEPTH = 3
LMR_FIRST_MOVE = 3
LMR_DEEPER_MOVE = 8
#: Logarithmic reductions (`Features.log_reductions`): a late quiet move is
#: reduced by LOG_LMR_BASE + ln(depth) * ln(move number) / LOG_LMR_DIVISOR
#: plies, one less at PV nodes, so the reduction grows with both the depth
#: and the move's place in the ordering (the table most engines use) instead
#: of the flat one or two plies.
LOG_LMR_BASE = 0.75
LOG_LMR_DIVISOR = 2.25
#: LOG_REDUCTIONS[depth][index], both capped at 63.
LOG_REDUCTIONS = [[int(LOG_LMR_BASE + math.log(depth) * math.log(index + 1) / LOG_LMR_DIVISOR) if depth and index else 0
                   for index in range(64)] for depth in range(64)]
#: Quiet-move pruning (`Features.quiet_pruning`), at depth <= QUIET_PRUNING_MAX_DEPTH:
#: late move pruning skips the quiet moves after the first LMP_BASE + depth**2
#: of them, futility pruning all of them once static eval + FUTILITY_BASE +
#: FUTILITY_MARGIN * depth <= alpha.
QUIET_PRUNING_MAX_DEPTH = 3
LMP_BASE = 3
FUTILITY_BASE = 80
FUTILITY_MARGIN = 90
#: Singular extensions (`Features.singular_extensions`): from this depth, a
#: hash move whose table score is a lower bound (or exact) from at least
#: depth - SINGULAR_TT_DEPTH plies is tested: if every other move fails
#: low against its score minus SINGULAR_MARGIN per ply, searched to half
#: the depth, it is the only move and is searched one ply deeper; if the
#: test's bound is itself above beta, several moves refute the position and
#: the node returns it (multi-cut).
SINGULAR_MIN_DEPTH = 5
SINGULAR_TT_DEPTH = 3
SINGULAR_MARGIN = 2
#: Internal iterative reduction (`Features.iir`): a node this deep with no
#: hash move is searched one ply shallower (its ordering is a guess, and the
#: next iteration will find it in the table).
IIR_MIN_DEPTH = 4
SEE_PRUNING_MAX_DEPTH = 4
SEE_CAPTURE_MARGIN = 200
SEE_QUIET_MARGIN = 40


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
        self.orderer.use_continuation(features.continuation_history and features.ordering)
        self.nodes = 0
        self.seldepth = 0
        # Triangular PV table: pv[ply] is the best line found from that ply.
        self.pv: list[list[chess.Move]] = [[] for _ in range(MAX_PLY + 2)]
        #: excluded[ply]: the move code a singular-extension test leaves out
        #: of the node at that ply (0: none; see `_singular`).
        self.excluded = [0] * (MAX_PLY + 2)
        self.tablebases = tablebases
        #: Quiescence reads and writes the table (`Features.qs_tt`).
        self.qs_tt = features.qs_tt and features.transposition
        #: Most pieces at which the tree probes the tablebases (0: never).
        self.tablebase_pieces = tablebases.search_pieces if tablebases is not None else 0
        #: Least remaining depth at which the tree probes: a probe costs several nodes.
        self.tablebase_depth = tablebases.probe_depth if tablebases is not None else 0

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes % CHECK_EVERY == 0 and self.should_stop is not None and self.should_stop(self.nodes):
            raise SearchAborted

    def alphabeta(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Fail-soft negamax value of the current position searched to `depth`."""
        self._tick()
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
                return self.quiescence(alpha, beta, ply, features.qs_checks, in_check)
            return pos.evaluate()
        if ply >= MAX_PLY:
            return pos.evaluate()

        key = pos.key
        hash_move = 0
        pv_node = beta - alpha > 1
        excluded = self.excluded[ply]  # this node is a singular-extension test: no table, no null move
        data = 0
        if features.transposition and not excluded:
            data = self.tt.probe_data(key)
            if data:
                # `search.tt.decode`, inlined: a call at every node costs 2.5 % (see there).
                hash_move = (data >> 27) & 0xFFFF
                if not pv_node and data & 255 >= depth:
                    score = score_from_tt(((data >> 10) & 0x1FFFF) - 65536, ply)
                    bound = (data >> 8) & 3
                    if bound == EXACT or (bound == LOWER and score >= beta) or (bound == UPPER and score <= alpha):
                        return score

        # Quiet moves from this count on are skipped (late move pruning), all
        # of them when the position is futile; 0: none is.
        quiets_allowed = 0
        see_prune = False  # `Features.main_see_pruning` applies at this node
        # Pruning on the static evaluation is never tried in check, at PV
        # nodes, or with only king and pawns, where passing may be the best
        # move (zugzwang).
        board = pos.board
        if ((features.null_move or features.quiet_pruning) and not pv_node and not in_check and ply > 0
                and board.occupied_co[board.turn] & ~(board.pawns | board.kings)):
            static = None  # evaluated once for both kinds of pruning
            if features.null_move and not excluded and abs(beta) < TB_WIN_BOUND:
                static = self._static_eval(data)
                score = self._prune_by_static_eval(depth, beta, ply, static)
                if score is not None:
                    return score
            if features.quiet_pruning and depth <= QUIET_PRUNING_MAX_DEPTH:
                if static is None:
                    static = self._static_eval(data)
                futile = static + FUTILITY_BASE + FUTILITY_MARGIN * depth <= alpha
                quiets_allowed = 1 if futile else LMP_BASE + depth * depth + 1
            see_prune = features.main_see_pruning and depth <= SEE_PRUNING_MAX_DEPTH
        quiets = 0
        if features.iir and not hash_move and depth >= IIR_MIN_DEPTH and not excluded:
            depth -= 1
        # The hash move's (the first move's) extra ply when it is singular;
        # or the node's value (multi-cut).
        extension = 0
        if (features.singular_extensions and features.ordering and hash_move and depth >= SINGULAR_MIN_DEPTH and ply > 0
                and (data >> 8) & 3 != UPPER and data & 255 >= depth - SINGULAR_TT_DEPTH):
            tt_score = score_from_tt(decode(data)[2], ply)
            if abs(tt_score) < TB_WIN_BOUND:
                singular_beta = tt_score - SINGULAR_MARGIN * depth
                score = self._singular(hash_move, depth, singular_beta, ply)
                if score < singular_beta:
                    extension = 1
                elif singular_beta >= beta:
                    return singular_beta

        original_alpha = alpha
        best_score = -INFINITY
        best_move = None
        pvs = features.pvs
        reduce_late = features.late_move_reductions and depth >= LMR_MIN_DEPTH and not in_check
        log_reductions = features.log_reductions
        # `Features.history_reductions`: the side to move's history, read before each move is made.
        history = self.orderer.history[board.turn] if features.history_reductions and features.ordering else None
        # Only these need to tell quiet moves from captures and promotions
        # (the test suite's game trees have no board to ask).
        classify = features.ordering or reduce_late or quiets_allowed
        index = -1
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
            if excluded and encode_move(move) == excluded:
                continue
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
            if see_prune and best_score > -TB_WIN_BOUND and self._see_futile(move, tactical, depth):
                if tactical:
                    continue
                if gives_check is None:
                    gives_check = pos.quiet_check_test()[0]
                if not gives_check(move):
                    continue
            quiet = reduce_late and index >= LMR_FIRST_MOVE and not tactical
            pos.push(move)
            if index == 0 or not pvs:
                score = -self.alphabeta(depth - (1 if index else 1 - extension), -beta, -alpha, ply + 1)
            else:
                reduction = 0
                if quiet and not pos.in_check():
                    # Late quiet moves rarely matter: look shallower first.
                    if log_reductions:
                        reduction = LOG_REDUCTIONS[depth if depth < 64 else 63][index if index < 64 else 63] - pv_node
                        # At least one ply, and the reduced search at least one ply deep.
                        reduction = max(1, min(reduction, depth - 2))
                    else:
                        reduction = 1 if index < LMR_DEEPER_MOVE else 2
                    if history is not None and history[move.from_square * 64 + move.to_square] < 0 \
                            and depth - 2 - reduction >= 1:
                        reduction += 1
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
            # Only the excluded move: no other move reaches the test's bound.
            return alpha if excluded else pos.no_moves_score(ply)
        if features.transposition and not excluded:
            if best_score >= beta:
                self.tt.store(key, depth, LOWER, best_score, best_move, ply)
            elif best_score > original_alpha:
                self.tt.store(key, depth, EXACT, best_score, best_move, ply)
            else:
                self.tt.store(key, depth, UPPER, best_score, None, ply)
        return best_score

    def _see_futile(self, move: chess.Move, tactical: bool, depth: int) -> bool:
        """Whether `move` loses more by static exchange than `Features.main_see_pruning` lets a move lose `depth` plies from the horizon.

        A move loses at most its piece less what it takes (the opponent
        may take it back, then we stop), so where that is within the margin
        the exchange is not worked out: captures of a piece worth at least
        the capturer, promotions, king moves (a legal one lands on a square
        nothing attacks) and, further from the horizon, the cheaper pieces.
        The result is the same; only SEE's cost is saved.
        """
        board = self.pos.board
        piece = board.piece_type_at(move.from_square)
        if piece == chess.KING:
            return False
        if tactical:
            if move.promotion:
                return False
            victim = board.piece_type_at(move.to_square)
            margin = SEE_CAPTURE_MARGIN * depth
            if victim is None or PIECE_VALUE[piece] - PIECE_VALUE[victim] <= margin:
                return False  # (en passant: a pawn takes a pawn)
            return see(board, move) < -margin
        margin = SEE_QUIET_MARGIN * depth * depth
        return PIECE_VALUE[piece] > margin and see(board, move) < -margin

    def _singular(self, hash_move: int, depth: int, singular_beta: int, ply: int) -> int:
        """The best of the node's other moves against a null window at `singular_beta`, at half depth.

        The same node searched again with the hash move left out: below
        `singular_beta`, the hash move is the only good one.
        """
        self.excluded[ply] = hash_move
        try:
            score = self.alphabeta((depth - 1) // 2, singular_beta - 1, singular_beta, ply)
        finally:
            self.excluded[ply] = 0
        self.pv[ply] = []
        return score

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

    def _static_eval(self, data: int) -> int:
        """The evaluation the pruning decisions stand on: static, or the table's score where its bound is tighter.

        With `Features.tt_static_eval`, a lower bound above the static
        evaluation (or an upper bound below it) from any earlier search of
        this position replaces it: the search saw what the evaluation
        could not.  Mate and tablebase scores are left out.
        """
        static = self.pos.evaluate()
        if data and self.features.tt_static_eval:
            _, bound, score, _ = decode(data)  # not every node: only where pruning is tried
            if abs(score) < TB_WIN_BOUND and (bound == EXACT or (bound == LOWER) == (score > static)):
                return score
        return static

    def _prune_by_static_eval(self, depth: int, beta: int, ply: int, static: int) -> int | None:
        """A fail-high score without searching the moves, or None.

        Reverse futility: near the horizon, a static evaluation far above
        beta will not be pulled down in the few plies left.  Null move:
        if passing and searching shallower still fails high, a real move
        (almost always better than passing) would too.  The caller leaves
        out positions with only king and pawns (zugzwang) and betas near
        mate scores; the null move is not made twice in a row.
        """
        pos = self.pos
        board = pos.board
        features = self.features
        if depth <= (RFP_DEEP_MAX_DEPTH if features.deep_rfp else RFP_MAX_DEPTH) and static - RFP_MARGIN * depth >= beta:
            return static
        if depth >= NULL_MOVE_MIN_DEPTH and static >= beta and board.move_stack and board.move_stack[-1]:
            if features.adaptive_null_move:
                reduction = NULL_MOVE_REDUCTION + 1 + depth // 3 + min(NULL_MOVE_EVAL_PLIES, (static - beta) // NULL_MOVE_EVAL_STEP)
            else:
                reduction = NULL_MOVE_REDUCTION + depth // 6
            pos.push_null()
            score = -self.alphabeta(depth - 1 - reduction, -beta, -beta + 1, ply + 1)
            pos.pop()
            if score >= beta:
                return beta if score >= TB_WIN_BOUND else score
        return None

    def quiescence(self, alpha: int, beta: int, ply: int, checks: bool = False, in_check: bool | None = None) -> int:
        """Resolve captures (and evasions when in check) until the position is quiet.

        The side to move may "stand pat" on the static evaluation instead of
        capturing, except in check, where every evasion is searched so that
        mates at the horizon are seen.  With `checks` (the first ply, under
        `Features.qs_checks`), quiet checks that do not lose the checking
        piece follow the captures.  `in_check`: whether the side to move is
        in check, if the caller knows (None: asked here).
        """
        self._tick()
        pos = self.pos
        self.pv[ply] = []
        if ply > self.seldepth:
            self.seldepth = ply
        if ply >= MAX_PLY:
            return pos.evaluate()

        # `Features.qs_tt`: the table's result where it holds one; else store ours.
        data = -1
        if self.qs_tt:
            key = pos.key
            data = self.tt.probe_data(key)
            if data and beta - alpha == 1:
                score = score_from_tt(((data >> 10) & 0x1FFFF) - 65536, ply)  # `decode`, inlined
                bound = (data >> 8) & 3
                if bound == EXACT or (bound == LOWER and score >= beta) or (bound == UPPER and score <= alpha):
                    return score
        board = pos.board
        if in_check is None:
            in_check = pos.in_check()
        if in_check:
            moves = pos.legal_moves()
            if not moves:
                return -MATE + ply
            best_score = -INFINITY
            stand_pat = -INFINITY
            if self.features.ordering:
                moves = self.orderer.order(board, moves, 0, ply)
        else:
            stand_pat = pos.evaluate()
            if stand_pat >= beta:
                return stand_pat
            best_score = stand_pat
            if stand_pat > alpha:
                alpha = stand_pat
            if (self.features.delta_pruning and not checks and stand_pat + _best_victim(board) + DELTA_MARGIN <= alpha
                    and not promoting_pawns(board)):
                return best_score  # delta pruning would skip every capture below: generate none
            moves = pos.tactical_moves()
            if self.features.ordering:
                moves = self.orderer.order_captures(board, moves)
            if checks:
                moves += [move for move in pos.quiet_checks() if see(board, move) >= 0]

        delta = self.features.delta_pruning and not in_check
        losing = self.features.see_pruning and not in_check
        piece_type_at = board.piece_type_at
        original_alpha = alpha
        best_move = None
        for move in moves:
            if (delta or losing) and not move.promotion:
                victim = piece_type_at(move.to_square)
                if victim is None:
                    # En passant takes a pawn; a quiet check (`checks`) is
                    # valued as the king, so neither margin prunes it: it may
                    # mate, and SEE has vetted it already.
                    victim = chess.PAWN if move.to_square == board.ep_square else chess.KING
                if delta and stand_pat + PIECE_VALUE[victim] + DELTA_MARGIN <= alpha:
                    continue
                # Only a capture of a cheaper piece can lose the exchange.
                if losing and PIECE_VALUE[piece_type_at(move.from_square)] > PIECE_VALUE[victim] and see(board, move) < 0:
                    continue
            pos.push(move)
            score = -self.quiescence(-beta, -alpha, ply + 1)
            pos.pop()
            if score > best_score:
                best_score = score
                if score > alpha:
                    alpha = score
                    best_move = move
                    self.pv[ply] = [move, *self.pv[ply + 1]]
                    if score >= beta:
                        break
        if not data and best_score > -INFINITY:
            bound = LOWER if best_score >= beta else EXACT if best_score > original_alpha else UPPER
            self.tt.store(key, 0, bound, best_score, best_move, ply)
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
