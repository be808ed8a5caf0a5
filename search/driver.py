"""Iterative deepening: the anytime driver around alpha-beta.

Depth 1, 2, 3, ... are searched in turn.  Each completed depth leaves a best
move and its principal variation, which also seeds move ordering for the next
depth (the previous best is searched first, the transposition table supplies
hash moves below).  Whenever the search is stopped — by `stop`, the clock or a
node limit — the answer is the best move of the last completed depth, or a
root move that the interrupted depth has already proven better.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import chess

from eval.nnue import Net
from search.alphabeta import AlphaBeta, SearchAborted
from search.features import Features
from search.ordering import MoveOrderer
from search.position import Position
from search.tablebase import RootResult, Tablebases, tablebase_score
from search.timeman import Deadlines, Limits, allocate, stability_scale
from search.tt import TranspositionTable, move_code_of
from search.types import EXACT, INFINITY, LOWER, MATE_BOUND, MAX_PLY, UPPER, mate_in

ASPIRATION_WINDOW = 35
ASPIRATION_MIN_DEPTH = 4
#: Root moves are announced (`info currmove`) only in long searches, as
#: Stockfish does, so fast games are not flooded with output.
CURRMOVE_AFTER_MS = 3000


@dataclass
class Iteration:
    """What one (possibly partial) root search found; reported as an `info` line."""

    depth: int
    seldepth: int
    score: int
    bound: int  # EXACT, LOWER (fail high) or UPPER (fail low)
    nodes: int
    time_ms: float
    hashfull: int
    pv: list[chess.Move] = field(default_factory=list)
    #: True for the report of a depth that was stopped after a root
    #: improvement: its first move is proven better than the previous
    #: depth's, but not every root move has been searched.
    partial: bool = False
    #: Which of the MultiPV lines this is (1 = best).
    multipv: int = 1
    #: Tablebase probes that found the position, this search so far.
    tbhits: int = 0

    @property
    def mate_in(self) -> int | None:
        """Moves to mate (negative: getting mated), or None for a cp score."""
        return mate_in(self.score)

    @property
    def nps(self) -> int:
        return int(self.nodes * 1000 / self.time_ms) if self.time_ms > 0 else 0


@dataclass
class SearchResult:
    best_move: chess.Move | None
    ponder_move: chess.Move | None
    score: int
    depth: int
    nodes: int
    time_ms: float
    pv: list[chess.Move]
    #: The last complete depth's lines, best first (more than one with MultiPV).
    lines: list[Iteration] = field(default_factory=list)


class Searcher:
    """Owns the transposition table and ordering tables across searches."""

    def __init__(self, hash_mb: int = 16, features: Features = Features(), net: Net | None = None) -> None:
        self.tt = TranspositionTable(hash_mb)
        self.features = features
        #: The learned evaluation to search with; None = the classical evaluation.
        self.net = net
        self.orderer = MoveOrderer(MAX_PLY)
        #: Endgame tables to consult (None: play without them).
        self.tablebases: Tablebases | None = None
        # Best root move proven during the current depth (survives aborts and
        # aspiration re-searches).
        self._root_best_score = -INFINITY
        self._root_best_pv: list[chess.Move] = []
        # MultiPV bookkeeping: which line is being searched, and the best
        # line of the current depth once it is complete.
        self._searching_line = 0
        self._finished_best: Iteration | None = None
        self._elapsed_ms: Callable[[], float] = lambda: 0.0
        self._on_currmove: Callable[[chess.Move, int, int], None] | None = None

    def clear(self) -> None:
        """Forget everything learnt (`ucinewgame`, `Clear Hash`)."""
        self.tt.clear()
        self.orderer.clear()

    def _tablebase_reports(
        self,
        on_iteration: Callable[[Iteration], None] | None,
        root: RootResult | None,
        hits_before: int,
    ) -> Callable[[Iteration], None] | None:
        """`on_iteration`, with each report carrying this search's tablebase hits.

        At a root the tables hold, the reported score is theirs: a search
        score there is only a heuristic for a known result.  The driver's own
        iterations keep the search scores, which its aspiration windows need.
        """
        tablebases = self.tablebases
        if on_iteration is None or tablebases is None:
            return on_iteration
        forward = on_iteration

        def report(iteration: Iteration) -> None:
            iteration = dataclasses.replace(iteration, tbhits=tablebases.hits - hits_before)
            if root is not None:
                iteration.score = tablebase_score(root, iteration.score)
                iteration.bound = EXACT
            forward(iteration)

        return report

    def search(
        self,
        board: chess.Board,
        limits: Limits | None = None,
        *,
        move_overhead: int = 30,
        stop: threading.Event | None = None,
        ponderhit: threading.Event | None = None,
        on_iteration: Callable[[Iteration], None] | None = None,
        multipv: int = 1,
        on_currmove: Callable[[chess.Move, int, int], None] | None = None,
    ) -> SearchResult:
        """Search `board` (left untouched) within `limits`; always returns a legal move if one exists.

        With `limits.ponder` the clock starts only once `ponderhit` is set.
        `multipv` > 1 reports that many best lines per depth (one
        `on_iteration` call each, `Iteration.multipv` = 1, 2, ..., best
        first, once the depth is complete).  `on_currmove(move, number,
        depth)` is told which root move is being searched once the search
        has run for `CURRMOVE_AFTER_MS`.
        """
        limits = limits or Limits()
        stop = stop or threading.Event()
        start = time.perf_counter()
        deadlines = Deadlines(allocate(limits, board.turn, move_overhead), start, active=not limits.ponder)
        max_nodes = limits.nodes

        def clock_now() -> float:
            """The time, starting the clock if a ponderhit has come in."""
            now = time.perf_counter()
            if not deadlines.active and ponderhit is not None and ponderhit.is_set():
                deadlines.activate(now)
            return now

        finished_depths = [0]

        def should_stop(nodes: int) -> bool:
            if stop.is_set():
                return True
            if max_nodes is not None and nodes >= max_nodes and finished_depths[0] >= limits.min_depth:
                return True
            return deadlines.hard_passed(clock_now())

        def elapsed_ms() -> float:
            return (time.perf_counter() - start) * 1000

        self.tt.new_search()
        self.orderer.age()
        pos = Position(board.copy(), self.net)
        tree = AlphaBeta(pos, self.tt, self.features, should_stop, self.orderer, tablebases=self.tablebases)
        root_moves = pos.legal_moves()
        if limits.searchmoves:
            wanted = set(limits.searchmoves)
            root_moves = [move for move in root_moves if move.uci() in wanted] or root_moves
        if self.features.ordering:
            root_moves = self.orderer.order(pos.board, root_moves, move_code_of(self.tt.probe_data(pos.key)), 0)
        # In the tables, search only the moves that keep their result.
        tablebases = self.tablebases
        hits_before = tablebases.hits if tablebases is not None else 0
        tablebase_root = tablebases.root_moves(pos.board, root_moves) if tablebases is not None else None
        if tablebase_root is not None:
            root_moves = tablebase_root.moves
        on_iteration = self._tablebase_reports(on_iteration, tablebase_root, hits_before)

        completed: Iteration | None = None
        # The last depth whose best move differed from the depth before's.
        last_change = 0
        best_move = root_moves[0] if root_moves else None
        max_depth = min(limits.depth or MAX_PLY - 1, MAX_PLY - 1)
        if not root_moves:
            max_depth = 0
        line_count = max(1, min(multipv, len(root_moves)))
        lines: list[Iteration] = []
        self._elapsed_ms = elapsed_ms
        self._on_currmove = on_currmove
        self._searching_line = 0
        self._finished_best = None

        for depth in range(1, max_depth + 1):
            try:
                if line_count == 1:
                    lines = [self._deepen(tree, root_moves, depth, completed, elapsed_ms, on_iteration)]
                else:
                    lines = self._deepen_lines(tree, root_moves, depth, lines, line_count, elapsed_ms, on_iteration)
            except SearchAborted:
                # A root move proven better during the aborted depth beats the
                # previous depth's choice; otherwise keep the previous one.
                if self._root_best_pv and self._searching_line == 0:
                    best_move = self._root_best_pv[0]
                    completed = Iteration(depth, tree.seldepth, self._root_best_score, LOWER, tree.nodes,
                                          elapsed_ms(), self.tt.hashfull(), list(self._root_best_pv), partial=True)
                    if on_iteration:
                        on_iteration(completed)
                elif self._searching_line > 0 and self._finished_best is not None:
                    # MultiPV: the best line of this depth was complete.
                    completed = self._finished_best
                    best_move = completed.pv[0]
                break
            score_drop = completed.score - lines[0].score if completed is not None else 0
            if completed is not None and lines[0].pv[0] != best_move:
                last_change = depth
            completed = lines[0]
            finished_depths[0] = depth
            best_move = completed.pv[0]
            root_moves.remove(best_move)
            root_moves.insert(0, best_move)
            scale = stability_scale(last_change, depth, score_drop)
            if self._should_finish(completed, limits, deadlines, clock_now(), len(root_moves), scale):
                break

        pv = completed.pv if completed else ([best_move] if best_move else [])
        # MultiPV: the lines of the last depth finished in full (a stop
        # usually lands inside a depth; its partial best line stays `pv`).
        final_lines = lines if line_count > 1 and lines else ([completed] if completed else [])
        return SearchResult(
            best_move=best_move,
            ponder_move=pv[1] if len(pv) > 1 and pv[0] == best_move else None,
            score=completed.score if completed else 0,
            depth=completed.depth if completed else 0,
            nodes=tree.nodes,
            time_ms=elapsed_ms(),
            pv=list(pv),
            lines=final_lines,
        )

    # --- one depth, with aspiration windows --------------------------------

    def _deepen(
        self,
        tree: AlphaBeta,
        root_moves: list[chess.Move],
        depth: int,
        previous: Iteration | None,
        elapsed_ms: Callable[[], float],
        on_iteration: Callable[[Iteration], None] | None,
        first_line: bool = True,
    ) -> Iteration:
        """Search one depth, re-searching with wider windows on a root fail-high/low.

        With `first_line` False (MultiPV lines 2, 3, ...) `root_moves` lacks
        the better lines' moves, so the root result is not stored in the TT.
        """
        self._root_best_score = -INFINITY
        self._root_best_pv = []
        if self.features.aspiration and previous is not None and depth >= ASPIRATION_MIN_DEPTH \
                and abs(previous.score) < MATE_BOUND:
            delta = ASPIRATION_WINDOW
            alpha, beta = previous.score - delta, previous.score + delta
        else:
            delta = 0
            alpha, beta = -INFINITY, INFINITY
        while True:
            score = self._root(tree, root_moves, depth, alpha, beta, store=first_line)
            if alpha < score < beta or delta == 0:
                bound = EXACT
            else:
                bound = UPPER if score <= alpha else LOWER
            iteration = Iteration(depth, tree.seldepth, score, bound, tree.nodes, elapsed_ms(),
                                  self.tt.hashfull(), list(tree.pv[0]))
            if bound == EXACT:
                if on_iteration:
                    on_iteration(iteration)
                return iteration
            if on_iteration and iteration.pv:
                on_iteration(iteration)  # root fail-high/low, reported as a bound
            delta *= 2
            if bound == UPPER:
                alpha = max(score - delta, -INFINITY)
            else:
                beta = min(score + delta, INFINITY)
            if delta > 1000:
                alpha, beta, delta = -INFINITY, INFINITY, 0

    def _deepen_lines(
        self,
        tree: AlphaBeta,
        root_moves: list[chess.Move],
        depth: int,
        previous: list[Iteration],
        line_count: int,
        elapsed_ms: Callable[[], float],
        on_iteration: Callable[[Iteration], None] | None,
    ) -> list[Iteration]:
        """MultiPV: the best `line_count` lines at `depth`, best first.

        Line k is the best line among the root moves not already chosen by
        lines 1..k-1 (Stockfish's method): each is an ordinary root search of
        the remaining moves, with an aspiration window around the same line's
        score from the previous depth.
        """
        lines: list[Iteration] = []
        self._finished_best = None
        for index in range(line_count):
            self._searching_line = index
            guide = previous[index] if index < len(previous) else None
            line = self._deepen(tree, root_moves[index:], depth, guide, elapsed_ms, None, first_line=index == 0)
            chosen = line.pv[0]
            root_moves.remove(chosen)
            root_moves.insert(index, chosen)
            lines.append(line)
            if index == 0:
                self._finished_best = line
        self._searching_line = 0
        # Later lines can come out better than earlier ones (search
        # instability); report them in score order.
        lines.sort(key=lambda line: line.score, reverse=True)
        root_moves[:line_count] = [line.pv[0] for line in lines]
        nodes, time_ms, hashfull = tree.nodes, elapsed_ms(), self.tt.hashfull()
        for number, line in enumerate(lines, start=1):
            line.multipv, line.nodes, line.time_ms, line.hashfull = number, nodes, time_ms, hashfull
            if on_iteration:
                on_iteration(line)
        return lines

    def _root(self, tree: AlphaBeta, root_moves: list[chess.Move], depth: int, alpha: int, beta: int,
              store: bool = True) -> int:
        """Search the root moves in order; remembers root improvements for aborts."""
        pos = tree.pos
        tree.seldepth = 0
        tree.pv[0] = []
        best_score = -INFINITY
        original_alpha = alpha
        pvs = self.features.pvs
        on_currmove = self._on_currmove
        for index, move in enumerate(root_moves):
            if on_currmove is not None and self._elapsed_ms() >= CURRMOVE_AFTER_MS:
                on_currmove(move, index + 1 + self._searching_line, depth)
            pos.push(move)
            try:
                if index == 0 or not pvs:
                    score = -tree.alphabeta(depth - 1, -beta, -alpha, 1)
                else:
                    score = -tree.alphabeta(depth - 1, -alpha - 1, -alpha, 1)
                    if alpha < score < beta:
                        score = -tree.alphabeta(depth - 1, -beta, -alpha, 1)
            finally:
                pos.pop()
            if score > best_score:
                best_score = score
                if score > alpha:
                    alpha = score
                    tree.pv[0] = [move, *tree.pv[1]]
                    # Only a move that beat the window is known to be good;
                    # a fail-high bound from an earlier window may be better still.
                    if score > self._root_best_score:
                        self._root_best_score = score
                        self._root_best_pv = list(tree.pv[0])
                    if score >= beta:
                        break
        if not tree.pv[0] and root_moves:
            tree.pv[0] = [root_moves[0]]
        if store and self.features.transposition and root_moves:
            bound = LOWER if best_score >= beta else EXACT if best_score > original_alpha else UPPER
            self.tt.store(pos.key, depth, bound, best_score, tree.pv[0][0], 0)
        return best_score

    @staticmethod
    def _should_finish(iteration: Iteration, limits: Limits, deadlines: Deadlines, now: float,
                       root_move_count: int, scale: float = 1.0) -> bool:
        """After a completed depth: is it time to answer?  `scale` stretches the soft limit."""
        if limits.mate is not None and iteration.mate_in is not None and 0 < iteration.mate_in <= limits.mate:
            return True
        if not deadlines.timed:
            return False  # infinite, pondering, or depth/nodes only
        if root_move_count == 1:
            return True  # forced move: don't waste the clock
        if deadlines.soft_passed(now, scale):
            return True
        # Under a clock, a proven mate is not worth more time: deeper depths
        # can only find a shorter one, and the game is decided either way.
        mate_in = iteration.mate_in
        return mate_in is not None and iteration.depth >= 2 * abs(mate_in) + 2
