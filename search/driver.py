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
from search.tt import DEFAULT_HASH_MB, TranspositionTable, decode
from search.types import EXACT, INFINITY, LOWER, MATE_BOUND, MAX_PLY, UPPER, mate_in

#: Aspiration windows: from ASPIRATION_MIN_DEPTH on, a depth is first searched
#: within ASPIRATION_WINDOW centipawns either side of the previous depth's
#: score; each fail high or low doubles the window on that side, and once it
#: has grown past ASPIRATION_MAX_DELTA the full window is used.  All three
#: are the engine skeleton's (a2d5e77) first choices, not tuned values: the
#: start is about a third of a pawn, the last resort ten pawns.
ASPIRATION_WINDOW = 35
ASPIRATION_MIN_DEPTH = 4
ASPIRATION_MAX_DELTA = 1000
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

    def __init__(self, hash_mb: int = DEFAULT_HASH_MB, features: Features = Features(), net: Net | None = None) -> None:
        self.tt = TranspositionTable(hash_mb)
        self.features = features
        #: The learned evaluation to search with; None = the classical evaluation.
        self.net = net
        self.orderer = MoveOrderer(MAX_PLY)
        #: Endgame tables to consult (None: play without them).
        self.tablebases: Tablebases | None = None
        #: Depths this searcher passes over (a Lazy SMP helper's diversity,
        #: search/smp.py); None: every depth.  The last depth is never skipped.
        self.skip_depth: Callable[[int], bool] | None = None
        #: What the search walks: `Position`, or a subclass that watches it (training/datagen.py's sampler).
        self.position_type: type[Position] = Position
        #: Static evaluations kept from search to search, and the net they are of.
        self._evals: tuple[Net | None, dict[int, int]] = (net, {})

    def clear(self) -> None:
        """Forget everything learnt (`ucinewgame`, `Clear Hash`)."""
        self.tt.clear()
        self.orderer.clear()
        self._evals = (self.net, {})

    def evals(self) -> dict[int, int]:
        """The evaluation cache for a search with `self.net`: a new one if the net changed since the last."""
        if self._evals[0] is not self.net:
            self._evals = (self.net, {})
        return self._evals[1]

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
        clock = SearchClock(limits, board.turn, move_overhead, stop or threading.Event(), ponderhit, board.ply())
        self.tt.new_search()
        self.orderer.age()
        pos = self.position_type(board.copy(), self.net, self.evals())
        tree = AlphaBeta(pos, self.tt, self.features, clock.should_stop, self.orderer, tablebases=self.tablebases)
        moves, on_iteration = self._root_moves(pos, limits, on_iteration)
        run = RootSearch(tree, RootMoves(moves), clock, self.features, on_iteration, on_currmove)
        return run.iterative_deepening(limits, multipv, self.skip_depth)

    def _root_moves(
        self,
        pos: Position,
        limits: Limits,
        on_iteration: Callable[[Iteration], None] | None,
    ) -> tuple[list[chess.Move], Callable[[Iteration], None] | None]:
        """The root moves to search, best first, and the reporter for this search.

        `go searchmoves` narrows the legal moves (if any of them is legal);
        the hash move and the ordering heuristics sort them; in the tables,
        only the moves that keep their result are searched, and the reports
        carry the tables' score (see `_tablebase_reports`).
        """
        moves = pos.legal_moves()
        if limits.searchmoves:
            wanted = set(limits.searchmoves)
            moves = [move for move in moves if move.uci() in wanted] or moves
        if self.features.ordering:
            moves = self.orderer.order(pos.board, moves, decode(self.tt.probe_data(pos.key))[3], 0, mailbox=pos.mailbox)
        tablebases = self.tablebases
        hits_before = tablebases.hits if tablebases is not None else 0
        tablebase_root = tablebases.root_moves(pos.board, moves) if tablebases is not None else None
        if tablebase_root is not None:
            moves = tablebase_root.moves
        return moves, self._tablebase_reports(on_iteration, tablebase_root, hits_before)

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
        The bound stays the search's: an aspiration fail-high or fail-low is
        not a finished depth (a Lazy SMP helper publishes only exact ones).
        """
        tablebases = self.tablebases
        if on_iteration is None or tablebases is None:
            return on_iteration
        forward = on_iteration

        def report(iteration: Iteration) -> None:
            iteration = dataclasses.replace(iteration, tbhits=tablebases.hits - hits_before)
            if root is not None:
                iteration.score = tablebase_score(root, iteration.score)
            forward(iteration)

        return report


class SearchClock:
    """When one search must stop: `stop`, the node limit, or the hard deadline.

    The node limit counts only once `limits.min_depth` depths are finished.
    While pondering the clock is dormant; it starts when `ponderhit` is set
    (noticed at the next look at the clock).  `ply`: the game's ply, which
    the time manager's plan counts the moves left from.
    """

    def __init__(self, limits: Limits, turn: chess.Color, move_overhead: int, stop: threading.Event,
                 ponderhit: threading.Event | None, ply: int = 0) -> None:
        self.limits = limits
        self.stop = stop
        self.ponderhit = ponderhit
        self.start = time.perf_counter()
        self.deadlines = Deadlines(allocate(limits, turn, move_overhead, ply), self.start, active=not limits.ponder)
        self.max_nodes = limits.nodes
        #: Depths completed so far (the node limit waits for `limits.min_depth`).
        self.finished_depth = 0

    def now(self) -> float:
        """The time, starting the clock if a ponderhit has come in."""
        now = time.perf_counter()
        if not self.deadlines.active and self.ponderhit is not None and self.ponderhit.is_set():
            self.deadlines.activate(now)
        return now

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.start) * 1000

    def should_stop(self, nodes: int) -> bool:
        """Asked by the tree every few nodes: abort now?"""
        if self.stop.is_set():
            return True
        if self.max_nodes is not None and nodes >= self.max_nodes and self.finished_depth >= self.limits.min_depth:
            return True
        return self.deadlines.hard_passed(self.now())


@dataclass
class RootMoves:
    """The root of one search (Stockfish's `RootMoves`): its moves, best first, and what is proven so far.

    `best_score` and `best_pv` are the best root move the depth (or MultiPV
    line) being searched has proven: they survive aspiration re-searches and
    are what an aborted depth falls back on.  With MultiPV, `line` is the
    line being searched (0: the best) and `first_line` line 1 of the depth,
    once it is complete.
    """

    moves: list[chess.Move]
    best_score: int = -INFINITY
    best_pv: list[chess.Move] = field(default_factory=list)
    line: int = 0
    first_line: Iteration | None = None

    def new_depth(self) -> None:
        """Forget the previous depth's (or line's) proven best."""
        self.best_score = -INFINITY
        self.best_pv = []

    def proven(self, score: int, pv: list[chess.Move]) -> None:
        """A root move beat the window with `score`: the best yet if no other did better."""
        if score > self.best_score:
            self.best_score = score
            self.best_pv = list(pv)

    def put_first(self, move: chess.Move, index: int = 0) -> None:
        """Move `move` to position `index` (the best line's move is searched first next depth)."""
        self.moves.remove(move)
        self.moves.insert(index, move)


class RootSearch:
    """One call of `Searcher.search`: iterative deepening over the root moves.

    Steps, each a method: `iterative_deepening` (the loop, its finishing rule
    and the abort fallback), `iteration` (one depth: one line, or MultiPV's
    several), `aspiration` (one line of one depth, re-searched with wider
    windows on a fail high or low), and `search_root` (the root moves in
    order within one window).
    """

    def __init__(self, tree: AlphaBeta, root: RootMoves, clock: SearchClock, features: Features,
                 on_iteration: Callable[[Iteration], None] | None,
                 on_currmove: Callable[[chess.Move, int, int], None] | None) -> None:
        self.tree = tree
        self.tt = tree.tt
        self.root = root
        self.clock = clock
        self.features = features
        self.on_iteration = on_iteration
        self.on_currmove = on_currmove

    def iterative_deepening(self, limits: Limits, multipv: int,
                            skip_depth: Callable[[int], bool] | None = None) -> SearchResult:
        """Depth 1, 2, ... until a limit, the finishing rule or a stop; the answer."""
        root, tree, clock = self.root, self.tree, self.clock
        completed: Iteration | None = None
        # The last depth whose best move differed from the depth before's.
        last_change = 0
        best_move = root.moves[0] if root.moves else None
        max_depth = min(limits.depth or MAX_PLY - 1, MAX_PLY - 1) if root.moves else 0
        line_count = max(1, min(multipv, len(root.moves)))
        lines: list[Iteration] = []
        for depth in range(1, max_depth + 1):
            if skip_depth is not None and completed is not None and depth < max_depth and skip_depth(depth):
                continue
            try:
                lines = self.iteration(depth, lines, completed, line_count)
            except SearchAborted:
                fallback = self.aborted(depth)
                if fallback is not None:
                    completed, best_move = fallback, fallback.pv[0]
                break
            score_drop = completed.score - lines[0].score if completed is not None else 0
            if completed is not None and lines[0].pv[0] != best_move:
                last_change = depth
            completed = lines[0]
            clock.finished_depth = depth
            best_move = completed.pv[0]
            root.put_first(best_move)
            scale = stability_scale(last_change, depth, score_drop)
            if should_finish(completed, limits, clock.deadlines, clock.now(), len(root.moves), scale):
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
            time_ms=clock.elapsed_ms(),
            pv=list(pv),
            lines=final_lines,
        )

    def aborted(self, depth: int) -> Iteration | None:
        """What a depth stopped midway leaves: a better root move it proved, or None (keep the last depth's).

        A root move proven better during the aborted depth beats the
        previous depth's choice (reported, as a lower bound); with MultiPV,
        line 1 of the aborted depth counts once it was complete.
        """
        root = self.root
        if root.best_pv and root.line == 0:
            partial = Iteration(depth, self.tree.seldepth, root.best_score, LOWER, self.tree.nodes,
                                self.clock.elapsed_ms(), self.tt.hashfull(), list(root.best_pv), partial=True)
            if self.on_iteration:
                self.on_iteration(partial)
            return partial
        if root.line > 0 and root.first_line is not None:
            return root.first_line
        return None

    def iteration(self, depth: int, previous_lines: list[Iteration], previous: Iteration | None,
                  line_count: int) -> list[Iteration]:
        """One depth: its line (or MultiPV lines), best first."""
        if line_count == 1:
            return [self.aspiration(self.root.moves, depth, previous, self.on_iteration)]
        return self.multipv_lines(depth, previous_lines, line_count)

    def multipv_lines(self, depth: int, previous: list[Iteration], line_count: int) -> list[Iteration]:
        """MultiPV: the best `line_count` lines at `depth`, best first.

        Line k is the best line among the root moves not already chosen by
        lines 1..k-1 (Stockfish's method): each is an ordinary root search of
        the remaining moves, with an aspiration window around the same line's
        score from the previous depth.
        """
        root = self.root
        moves = root.moves
        lines: list[Iteration] = []
        root.first_line = None
        for index in range(line_count):
            root.line = index
            guide = previous[index] if index < len(previous) else None
            line = self.aspiration(moves[index:], depth, guide, None, first_line=index == 0)
            root.put_first(line.pv[0], index)
            lines.append(line)
            if index == 0:
                root.first_line = line
        root.line = 0
        # Later lines can come out better than earlier ones (search
        # instability); report them in score order.
        lines.sort(key=lambda line: line.score, reverse=True)
        moves[:line_count] = [line.pv[0] for line in lines]
        nodes, time_ms, hashfull = self.tree.nodes, self.clock.elapsed_ms(), self.tt.hashfull()
        for number, line in enumerate(lines, start=1):
            line.multipv, line.nodes, line.time_ms, line.hashfull = number, nodes, time_ms, hashfull
            if self.on_iteration:
                self.on_iteration(line)
        return lines

    def aspiration(
        self,
        moves: list[chess.Move],
        depth: int,
        previous: Iteration | None,
        on_iteration: Callable[[Iteration], None] | None,
        first_line: bool = True,
    ) -> Iteration:
        """Search one line of one depth, re-searching with wider windows on a root fail-high/low.

        With `first_line` False (MultiPV lines 2, 3, ...) `moves` lacks
        the better lines' moves, so the root result is not stored in the TT.
        """
        tree = self.tree
        self.root.new_depth()
        if self.features.aspiration and previous is not None and depth >= ASPIRATION_MIN_DEPTH \
                and abs(previous.score) < MATE_BOUND:
            delta = ASPIRATION_WINDOW
            alpha, beta = previous.score - delta, previous.score + delta
        else:
            delta = 0
            alpha, beta = -INFINITY, INFINITY
        while True:
            score = self.search_root(moves, depth, alpha, beta, store=first_line)
            if alpha < score < beta or delta == 0:
                bound = EXACT
            else:
                bound = UPPER if score <= alpha else LOWER
            iteration = Iteration(depth, tree.seldepth, score, bound, tree.nodes, self.clock.elapsed_ms(),
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
            if delta > ASPIRATION_MAX_DELTA:
                alpha, beta, delta = -INFINITY, INFINITY, 0

    def search_root(self, moves: list[chess.Move], depth: int, alpha: int, beta: int, store: bool = True) -> int:
        """Search the root moves in order; root improvements go to `self.root` for aborts."""
        tree = self.tree
        pos = tree.pos
        root = self.root
        tree.seldepth = 0
        tree.pv[0] = []
        best_score = -INFINITY
        original_alpha = alpha
        pvs = self.features.pvs
        on_currmove = self.on_currmove
        for index, move in enumerate(moves):
            if on_currmove is not None and self.clock.elapsed_ms() >= CURRMOVE_AFTER_MS:
                on_currmove(move, index + 1 + root.line, depth)
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
                    root.proven(score, tree.pv[0])
                    if score >= beta:
                        break
        if not tree.pv[0] and moves:
            tree.pv[0] = [moves[0]]
        if store and self.features.transposition and moves:
            bound = LOWER if best_score >= beta else EXACT if best_score > original_alpha else UPPER
            self.tt.store(pos.key, depth, bound, best_score, tree.pv[0][0], 0)
        return best_score


def should_finish(iteration: Iteration, limits: Limits, deadlines: Deadlines, now: float,
                  root_move_count: int, scale: float = 1.0) -> bool:
    """The finishing rule, after a completed depth: is it time to answer?  `scale` stretches the soft limit."""
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
