"""Endgame tablebases: perfect knowledge of positions with few pieces left.

Two kinds of tables are read, both through python-chess:

* **Syzygy** (``*.rtbw`` win/draw/loss, ``*.rtbz`` distance to zeroing).  Their
  results respect the fifty-move rule: a *cursed win* can be forced to mate
  but not before the rule draws it.  At the root a win plays a move of the
  smallest DTZ, which is sure to convert inside the fifty-move rule, and a
  loss a move of the largest (`search.syzygy` opens the files and ranks).
* **Gaviota** (``*.gtb.cp4``, distance to mate).  Read with python-chess's
  pure-Python prober: libgtb is rarely installed, and the native binding
  allows only one open instance per process.  DTM knows nothing of the
  fifty-move rule, so where both kinds hold a position Syzygy decides the
  root, and in the search a Gaviota mate counts as exact only when it lands
  before the rule could intervene.

The search asks two questions: "what is this position worth?" inside the tree
(`probe_score`, one WDL/DTM probe, only right after a capture or pawn move)
and "which root moves keep the result?" (`root_moves`).  Nothing here raises
on a bad path or a missing or damaged table: paths come back as messages for
the user, probes as None.
"""
from __future__ import annotations

import os
from typing import Iterable, NamedTuple, Protocol

import chess
import chess.syzygy

from search.gaviota import open_gaviota
from search.syzygy import DTZ_BEFORE_ZEROING, FIFTY_MOVE_PLIES, MAX_RANK, dtz_rank, is_decided, open_syzygy
from search.types import MATE, MATE_BOUND, TB_WIN

#: A cursed win (a draw under the fifty-move rule) is still a little better
#: than a plain draw: the opponent may yet go wrong.
CURSED_WIN = 1
#: Path values meaning "no tables" (`<empty>` is the UCI convention).
NO_PATHS = ("", "<empty>")
#: Least remaining depth for a probe in the search (Stockfish's SyzygyProbeDepth).
#: A WDL probe costs about as much as four nodes; leaving the horizon nodes
#: unprobed keeps `bench` at its speed without tables, and endgames lose
#: less than a fifth of theirs (docs/tablebases.md has the figures).
DEFAULT_PROBE_DEPTH = 1
#: Most problems remembered from probes that failed (each table once).
MAX_PROBLEMS = 16


class SyzygyProber(Protocol):
    """What is needed of `chess.syzygy.Tablebase` (tests substitute fakes)."""

    def probe_wdl(self, board: chess.Board) -> int: ...

    def probe_dtz(self, board: chess.Board) -> int: ...

    def close(self) -> None: ...


class GaviotaProber(Protocol):
    """What is needed of `chess.gaviota.PythonTablebase`."""

    def probe_dtm(self, board: chess.Board) -> int: ...

    def close(self) -> None: ...


class RootResult(NamedTuple):
    """The root moves that keep the tables' result, best first, and what they are worth."""

    moves: list[chess.Move]
    #: Side to move's score: a mate score when the distance to mate is known.
    score: int


class _Ranked(NamedTuple):
    move: chess.Move
    rank: int  # higher is better; equal ranks are equally good
    order: int  # lower first within one rank: the move that makes most progress
    score: int


class Tablebases:
    """The Syzygy and Gaviota tables in use, their probes, and a hit counter.

    `probe_limit` caps the pieces (kings included) at which the search probes;
    0 switches in-search probes off, the root still uses the tables.
    """

    def __init__(self) -> None:
        self.syzygy: SyzygyProber | None = None
        self.syzygy_pieces = 0
        #: Material keys ("KRvK") of the WDL tables at hand; None: unknown, probe anyway.
        self.syzygy_keys: frozenset[str] | None = None
        self.gaviota: GaviotaProber | None = None
        self.gaviota_pieces = 0
        self.probe_limit = 7
        #: The paths the tables were opened from (a helper process opens the same).
        self.syzygy_path = ""
        self.gaviota_path = ""
        #: Least remaining depth at which the search probes (SyzygyProbeDepth).
        self.probe_depth = DEFAULT_PROBE_DEPTH
        #: Successful probes since the tables were opened.
        self.hits = 0
        #: Probes that failed on a damaged table, for the user (see `take_problems`).
        self.problems: list[str] = []
        self._failed: set[str] = set()

    # --- opening ------------------------------------------------------------------

    @property
    def max_pieces(self) -> int:
        """Most pieces (kings included) of any table in use; 0: none."""
        return max(self.syzygy_pieces, self.gaviota_pieces)

    @property
    def search_pieces(self) -> int:
        """Most pieces at which the search probes; 0: never."""
        return min(self.probe_limit, self.max_pieces)

    def set_syzygy_path(self, paths: str) -> list[str]:
        """Use the Syzygy tables in `paths` (directories joined by os.pathsep); messages for the user."""
        if self.syzygy is not None:
            self.syzygy.close()
        self.syzygy, self.syzygy_pieces, self.syzygy_keys = None, 0, None
        self.syzygy_path = paths
        directories = split_paths(paths)
        if not directories:
            return []
        tables, messages = open_syzygy(directories)
        pieces = max((len(key) - 1 for key in tables.wdl), default=0)  # "KQvK": 3 pieces
        if pieces:
            # python-chess answers KvK (a draw) without a table.
            self.syzygy, self.syzygy_pieces, self.syzygy_keys = tables, pieces, frozenset([*tables.wdl, "KvK"])
            dtz = len({table.key for table in tables.dtz.values()})
            wdl = len({table.key for table in tables.wdl.values()})
            messages.append(f"Syzygy: {wdl} WDL and {dtz} DTZ tables, up to {pieces} pieces")
        else:
            tables.close()
            messages.append("Syzygy: no usable tables found; Syzygy tablebases off")
        return messages

    def set_gaviota_path(self, paths: str) -> list[str]:
        """Use the Gaviota tables in `paths` (directories joined by os.pathsep); messages for the user."""
        if self.gaviota is not None:
            self.gaviota.close()
        self.gaviota, self.gaviota_pieces = None, 0
        self.gaviota_path = paths
        directories = split_paths(paths)
        if not directories:
            return []
        tables, messages = open_gaviota(directories)
        pieces = max((len(name) for name in tables.available_tables), default=0)  # "kqk": 3 pieces
        if pieces:
            self.gaviota, self.gaviota_pieces = tables, pieces
            messages.append(f"Gaviota: {len(tables.available_tables)} tables, up to {pieces} pieces")
        else:
            tables.close()
            messages.append("Gaviota: no usable tables found; Gaviota tablebases off")
        return messages

    def close(self) -> None:
        self.set_syzygy_path("")
        self.set_gaviota_path("")

    def take_problems(self) -> list[str]:
        """Messages about probes that failed since the last call (a table damaged inside)."""
        problems, self.problems = self.problems, []
        return problems

    # --- probing --------------------------------------------------------------------

    def covers(self, board: chess.Board) -> bool:
        """Whether a table could hold `board`: few enough pieces and no castling rights."""
        return not board.castling_rights and chess.popcount(board.occupied) <= self.max_pieces

    def probe_wdl(self, board: chess.Board) -> int | None:
        """Win/draw/loss for the side to move in Syzygy's terms; None if no table holds it.

        2 win, 1 cursed win (a draw by the fifty-move rule), 0 draw, -1
        blessed loss, -2 loss.  Syzygy assumes the position arose from a
        capture or pawn move; Gaviota knows no fifty-move rule and answers
        only 2, 0 or -2.

        Public API for asking the tables about a position (the search itself
        asks `probe_score` and `root_moves`).
        """
        if not self.covers(board):
            return None
        wdl = self._syzygy_wdl(board)
        if wdl is None:
            dtm = self._gaviota_dtm(board)
            if dtm is not None:
                wdl = 2 * _sign(dtm) if dtm else (-2 if board.is_checkmate() else 0)
        return wdl

    def probe_score(self, board: chess.Board, ply: int) -> int | None:
        """The search's score for `board` at `ply`, side to move's view; None if no table holds it.

        A Gaviota mate that comes before the fifty-move rule can strike is
        scored exactly like a mate the search found itself; other wins score
        TB_WIN - ply.  Meant for positions just after a capture or pawn move,
        which is what Syzygy's WDL tables assume.
        """
        if not self.covers(board):
            return None
        dtm = self._gaviota_dtm(board)
        if dtm == 0 and board.is_checkmate():  # Gaviota stores mated positions as 0
            return -MATE + ply
        if dtm is not None and abs(dtm) <= FIFTY_MOVE_PLIES - board.halfmove_clock:
            return dtm_score(dtm, ply)
        wdl = self._syzygy_wdl(board)
        if wdl is None and dtm is not None:
            wdl = 2 * _sign(dtm)
        if wdl == -2 and board.is_checkmate():  # asked only of lost positions: legal moves cost
            return -MATE + ply
        return None if wdl is None else wdl_score(wdl, ply)

    def root_moves(self, board: chess.Board, candidates: Iterable[chess.Move] | None = None) -> RootResult | None:
        """The root moves (of `candidates`, default all legal) that keep the tables' result.

        Best first: for a win the move nearest to zeroing (Syzygy) or mate
        (Gaviota), for a loss the longest resistance.  None when the tables
        do not hold every resulting position.
        """
        if not self.covers(board):
            return None
        moves = list(board.generate_legal_moves()) if candidates is None else list(candidates)
        if not moves:
            return None
        board = board.copy()  # probes push and pop; the caller's board stays untouched
        for rank in (self._rank_by_dtz, self._rank_by_dtm, self._rank_by_wdl):
            ranked = rank(board, moves)
            if ranked is not None:
                return _best_group(ranked)
        return None

    # --- root ranking -------------------------------------------------------------------

    def _rank_by_dtz(self, board: chess.Board, moves: list[chess.Move]) -> list[_Ranked] | None:
        """Wins by fewest plies to zeroing, losses by most (see `search.syzygy`)."""
        if not self._syzygy_holds(board):
            return None
        clock = board.halfmove_clock
        ranked = []
        for move in moves:
            dtz = self._dtz_after(board, move)
            if dtz is None:
                return None
            ranked.append(_Ranked(move, dtz_rank(dtz, clock), 0, dtz_score(dtz, clock)))
        return ranked

    def _dtz_after(self, board: chess.Board, move: chess.Move) -> int | None:
        """DTZ of the root position if `move` is played, counted from the root."""
        board.push(move)
        try:
            if board.is_checkmate():
                return 1
            if board.halfmove_clock == 0:
                wdl = self._syzygy_wdl(board)
                return None if wdl is None else DTZ_BEFORE_ZEROING[-wdl]
            if board.halfmove_clock >= FIFTY_MOVE_PLIES or board.is_repetition(3):
                return 0
            dtz = self._syzygy_dtz(board)
            if dtz is None:
                return None
            return -dtz - _sign(dtz)  # one ply further from the root, other side's view
        finally:
            board.pop()

    def _rank_by_dtm(self, board: chess.Board, moves: list[chess.Move]) -> list[_Ranked] | None:
        """Quickest mate when winning, longest resistance when losing."""
        if self.gaviota is None or chess.popcount(board.occupied) > self.gaviota_pieces:
            return None
        ranked = []
        for move in moves:
            dtm = self._dtm_after(board, move)
            if dtm is None:
                return None
            rank = MAX_RANK - dtm if dtm > 0 else -MAX_RANK - dtm if dtm < 0 else 0
            ranked.append(_Ranked(move, rank, 0, dtm_score(dtm, 0)))
        return ranked

    def _dtm_after(self, board: chess.Board, move: chess.Move) -> int | None:
        """Plies to mate from the root if `move` is played (negative: getting mated; 0: draw)."""
        board.push(move)
        try:
            if board.is_checkmate():
                return 1
            if board.halfmove_clock >= FIFTY_MOVE_PLIES or board.is_repetition(3):
                return 0
            dtm = self._gaviota_dtm(board)
            if dtm is None:
                return None
            return -dtm - _sign(dtm)
        finally:
            board.pop()

    def _rank_by_wdl(self, board: chess.Board, moves: list[chess.Move]) -> list[_Ranked] | None:
        """Syzygy without DTZ files: keep the moves with the best result, no progress order."""
        if not self._syzygy_holds(board):
            return None
        ranked = []
        for move in moves:
            board.push(move)
            try:
                if board.is_checkmate():
                    wdl: int | None = 2
                elif board.is_repetition(3):
                    wdl = 0
                else:
                    child = self._syzygy_wdl(board)
                    wdl = None if child is None else -child
            finally:
                board.pop()
            if wdl is None:
                return None
            ranked.append(_Ranked(move, _WDL_RANK[wdl], 0, wdl_score(wdl, 0)))
        return ranked

    # --- single probes: a missing or damaged table is None, never an exception -------------------

    def _syzygy_holds(self, board: chess.Board) -> bool:
        """Whether a Syzygy table at hand has this material (probing one that is not costs more)."""
        if self.syzygy is None or chess.popcount(board.occupied) > self.syzygy_pieces:
            return False
        return self.syzygy_keys is None or chess.syzygy.calc_key(board) in self.syzygy_keys

    def _syzygy_wdl(self, board: chess.Board) -> int | None:
        if not self._syzygy_holds(board):
            return None
        try:
            wdl = self.syzygy.probe_wdl(board)
            if wdl not in _WDL_RANK:
                raise ValueError(f"WDL value {wdl!r} out of range")
        except Exception as error:  # a damaged table must cost the probe, not the game
            self._note_failure("WDL", board, error)
            return None
        self.hits += 1
        return wdl

    def _syzygy_dtz(self, board: chess.Board) -> int | None:
        if self.syzygy is None:
            return None
        try:
            dtz = self.syzygy.probe_dtz(board)
        except Exception as error:  # missing DTZ file (KeyError) or a damaged one
            self._note_failure("DTZ", board, error)
            return None
        self.hits += 1
        return dtz

    def _note_failure(self, kind: str, board: chess.Board, error: Exception, tables: str = "Syzygy") -> None:
        """Remember, once per table, a probe that failed for another reason than a missing table."""
        if isinstance(error, KeyError):  # no such table, or a position no table can hold
            return
        import chess.syzygy

        name = f"{kind} {chess.syzygy.calc_key(board)}"
        seen = f"{tables} {name}"
        if seen in self._failed or len(self._failed) >= MAX_PROBLEMS:
            return
        self._failed.add(seen)
        self.problems.append(f"{tables}: {name} probe failed ({type(error).__name__}: {error}); "
                             "the search goes on without it")

    def _gaviota_dtm(self, board: chess.Board) -> int | None:
        """Plies to mate for the side to move (negative: mated), 0 for draws and mated positions."""
        if self.gaviota is None or chess.popcount(board.occupied) > self.gaviota_pieces:
            return None
        try:
            dtm = self.gaviota.probe_dtm(board)
        except Exception as error:  # a damaged table must cost the probe, not the game
            self._note_failure("DTM", board, error, tables="Gaviota")
            return None
        self.hits += 1
        return dtm


# --- scores and ranks ------------------------------------------------------------------------

#: Root rank of a move by its WDL, when only WDL tables are there.
_WDL_RANK = {2: MAX_RANK, 1: MAX_RANK - 101, 0: 0, -1: -MAX_RANK + 101, -2: -MAX_RANK}


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def dtm_score(dtm: int, ply: int) -> int:
    """Search score of a position `dtm` plies from mate (Gaviota's sign), reached at `ply`."""
    if dtm > 0:
        return MATE - ply - dtm
    if dtm < 0:
        return -MATE + ply - dtm
    return 0


def wdl_score(wdl: int, ply: int) -> int:
    """Search score of a Syzygy WDL value at `ply`: sure wins just below mate scores."""
    if wdl == 2:
        return TB_WIN - ply
    if wdl == -2:
        return -TB_WIN + ply
    return CURSED_WIN * wdl


def dtz_score(dtz: int, clock: int) -> int:
    """Score of a root move of DTZ `dtz` (from the root) with the root's fifty-move `clock`.

    A win or loss the rule cannot touch is TB_WIN less the plies to zeroing
    (nearer conversion, higher; longer resistance, less negative); a cursed
    win or blessed loss is a draw by the rule, scored as Stockfish does.
    """
    rank = dtz_rank(dtz, clock)
    if is_decided(rank):
        return TB_WIN - dtz if dtz > 0 else -TB_WIN - dtz
    return rank_score(rank)


def rank_score(rank: int) -> int:
    """Score of a root rank that is not decided: cursed wins 1 to 49 cp, growing as the rule's reach nears."""
    if rank < 0:
        return -rank_score(-rank)
    if is_decided(rank):
        return TB_WIN
    if rank > 0:  # cursed: 1.5 cp, growing to 49 cp as the win comes within the rule's reach
        return max(3, rank - (MAX_RANK - 200)) * 100 // 200
    return 0


def _best_group(ranked: list[_Ranked]) -> RootResult:
    """The moves of the best rank, most progress first (stable otherwise)."""
    best = max(entry.rank for entry in ranked)
    group = sorted((entry for entry in ranked if entry.rank == best), key=lambda entry: entry.order)
    return RootResult([entry.move for entry in group], group[0].score)


def tablebase_score(root: RootResult, search_score: int) -> int:
    """The score to report at a root the tables hold.

    A known distance to mate from the tables is exact; otherwise a mate the
    search proved is more precise than "won"; anything else the search says
    is a heuristic the tables overrule.
    """
    if abs(root.score) > MATE_BOUND or abs(search_score) <= MATE_BOUND:
        return root.score
    return search_score


# --- opening directories -------------------------------------------------------------------


def split_paths(paths: str) -> list[str]:
    """Directories in an os.pathsep-separated list; `<empty>` and blanks mean none.

    A leading `~` is the home folder, as a shell would read it: a GUI's or a
    user's option value has been through no shell.
    """
    if paths.strip() in NO_PATHS:
        return []
    return [os.path.expanduser(part.strip()) for part in paths.split(os.pathsep) if part.strip() not in NO_PATHS]
