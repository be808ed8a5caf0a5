"""A python-chess board plus the state the search updates move by move.

python-chess supplies the rules (legal moves, check, make/unmake).  On top of it
this class keeps, incrementally, what the search needs at every node and what
would be slow to recompute from scratch there:

* a 64-bit Zobrist key, identical to `chess.polyglot.zobrist_hash` (so the
  incremental update can be tested against python-chess's full computation);
* the packed evaluation sums (middlegame, endgame, phase) of `eval.evaluate`;
* with a net, the NNUE accumulators of both perspectives (`eval.accumulator`
  updates and scores them);
* a mailbox: the piece type on each square (None: empty), so that the
  search's many "what stands here?" questions are a list index instead of
  python-chess's walk over six bitboards (`piece_type_at`);
* a cache of static evaluations by key (a third or more of the positions a
  search evaluates were evaluated before: transpositions, and the same
  quiescence leaves at every depth of iterative deepening);
* the history of keys, for cheap repetition detection.

The alpha-beta code talks to positions only through the methods used in
`search.alphabeta`; tests substitute a tiny game-tree adapter with the same
methods to replay textbook trees.
"""
from __future__ import annotations

from typing import Callable

import chess
import chess.polyglot

from eval.accumulator import Accumulator
from eval.evaluate import finish, packed_score
from eval.nnue import Net
from eval.weights import EG_TABLE, MG_TABLE, PHASE_WEIGHT
from search.boardpush import pop_plain, push_plain
from search.checks import gives_check, quiet_check_test
from search.movegen import evasions, legal_captures, promoting_pawns
from search.movegen import legal_moves as movegen_legal_moves
from search.types import MATE, MAX_STATIC_SCORE, mailbox_of

_KNIGHT_ATTACKS = chess.BB_KNIGHT_ATTACKS
_PAWN_ATTACKS = chess.BB_PAWN_ATTACKS
_DIAG_ATTACKS, _DIAG_MASKS = chess.BB_DIAG_ATTACKS, chess.BB_DIAG_MASKS
_RANK_ATTACKS, _RANK_MASKS = chess.BB_RANK_ATTACKS, chess.BB_RANK_MASKS
_FILE_ATTACKS, _FILE_MASKS = chess.BB_FILE_ATTACKS, chess.BB_FILE_MASKS

_RANDOM = chess.polyglot.POLYGLOT_RANDOM_ARRAY
#: ZOBRIST_PIECE[color][piece_type][square], in polyglot's layout.
ZOBRIST_PIECE = [
    [[0] * 64] + [[_RANDOM[64 * ((pt - 1) * 2 + color) + sq] for sq in chess.SQUARES] for pt in chess.PIECE_TYPES]
    for color in (chess.BLACK, chess.WHITE)  # index by the bool colour
]
ZOBRIST_TURN = _RANDOM[780]
ZOBRIST_EP_FILE = _RANDOM[772:780]

#: The evaluation cache is emptied when it holds this many scores (some 6 MB).
EVAL_CACHE_ENTRIES = 1 << 16


def _castling_key(rights: int) -> int:
    key = 0
    for bit, index in ((chess.BB_H1, 768), (chess.BB_A1, 769), (chess.BB_H8, 770), (chess.BB_A8, 771)):
        if rights & bit:
            key ^= _RANDOM[index]
    return key


_CASTLING_KEYS: dict[int, int] = {}
#: Polyglot names castling rights by side (king- or queenside), not by rook
#: square; in Chess960 that depends on where the king stands, so those boards
#: ask python-chess's hasher (only on moves that can change the rights).
_POLYGLOT = chess.polyglot.ZobristHasher(chess.polyglot.POLYGLOT_RANDOM_ARRAY)


def castling_key(rights: int) -> int:
    """Zobrist contribution of a standard-chess castling-rights mask (memoised: few distinct masks)."""
    key = _CASTLING_KEYS.get(rights)
    if key is None:
        key = _CASTLING_KEYS[rights] = _castling_key(rights)
    return key


def _ep_key(board: chess.Board) -> int:
    """Polyglot hashes the ep file only when a pawn stands ready to capture."""
    ep = board.ep_square
    if ep is None:
        return 0
    if board.pawns & board.occupied_co[board.turn] & chess.BB_PAWN_ATTACKS[not board.turn][ep]:
        return ZOBRIST_EP_FILE[ep & 7]
    return 0


def _castling_squares(board: chess.Board, move: chess.Move) -> tuple[int, int, int]:
    """(king target, rook origin, rook target) of a castling move.

    Covers both notations python-chess uses: king two squares (e1g1) in
    standard chess and king-takes-own-rook (e1h1, b1a1, ...) in Chess960.
    """
    king_from, to = move.from_square, move.to_square
    if board.rooks & board.occupied_co[board.turn] & chess.BB_SQUARES[to]:
        rook_from = to
    else:
        rook_from = to + 1 if to > king_from else to - 2
    back_rank = king_from & ~7
    if rook_from > king_from:
        return back_rank + 6, rook_from, back_rank + 5
    return back_rank + 2, rook_from, back_rank + 3


class Position:
    """Board + incremental key/evaluation; `push`/`pop` keep all of it in step."""

    __slots__ = ("board", "key", "mg", "eg", "phase", "_undo", "history", "net", "acc", "_accumulator",
                 "_null_floor", "_null_floors", "evals", "_plain", "mailbox")

    def __init__(self, board: chess.Board, net: Net | None = None, evals: dict[int, int] | None = None) -> None:
        """`evals`: the static scores of `net` by key, to share across searches (see `evaluate`); None: a new one."""
        self.board = board
        # A plain board (no variant) takes the inlined push (`search.boardpush`).
        self._plain = type(board) is chess.Board
        #: Static evaluations by key, all from `net` (the owner resets it when the net changes).
        self.evals: dict[int, int] = {} if evals is None else evals
        self.key = chess.polyglot.zobrist_hash(board)
        #: The piece type on each square, None where empty; changed in place, never replaced.
        self.mailbox: list[chess.PieceType | None] = mailbox_of(board)
        packed = packed_score(board)
        self.mg, self.eg, self.phase = packed.mg, packed.eg, packed.phase
        #: The learned evaluation, or None for the classical one.
        self.net = net
        #: The net's accumulator vector (None without a net), and what updates and scores it.
        self._accumulator = Accumulator(net) if net is not None else None
        self.acc = self._accumulator.refresh(board) if net is not None else None
        # What `pop` restores: the key, the evaluation sums, the accumulator,
        # then the mailbox: an ordinary move's squares and pieces (from, mover,
        # to, captured, capture square), or a copy of the whole of it.
        self._undo: list[tuple] = []
        # Keys of the positions since the last irreversible move of the game,
        # oldest first, ending with the current one; python-chess's own move
        # stack is replayed once to find them.
        self.history: list[int] = _game_keys(board)
        # Repetition scans stop above this index of `history`: the position
        # just before the last null move (-1: no null move on the line).
        self._null_floor = -1
        self._null_floors: list[int] = []

    # --- rules, delegated to python-chess -------------------------------

    def in_check(self) -> bool:
        """`board.is_check()`, inlined: asked at every node of the search.

        python-chess goes through `king()` and `checkers_mask()`; here the
        king's square comes straight from the bitboards, and the attack
        tables are read with the cheap piece types first.
        """
        board = self.board
        us = board.turn
        king = (board.kings & board.occupied_co[us]).bit_length() - 1
        if king < 0:
            return False
        them = board.occupied_co[not us]
        if _KNIGHT_ATTACKS[king] & board.knights & them or _PAWN_ATTACKS[us][king] & board.pawns & them:
            return True
        occupied = board.occupied
        queens = board.queens
        if _DIAG_ATTACKS[king][_DIAG_MASKS[king] & occupied] & (board.bishops | queens) & them:
            return True
        return bool((_RANK_ATTACKS[king][_RANK_MASKS[king] & occupied] | _FILE_ATTACKS[king][_FILE_MASKS[king] & occupied])
                    & (board.rooks | queens) & them)

    def gives_check(self, move: chess.Move) -> bool:
        """`board.gives_check(move)` without playing the move (`search.checks.gives_check`)."""
        return gives_check(self.board, move, self.mailbox)

    def quiet_check_test(self) -> tuple[Callable[[chess.Move], bool], chess.Bitboard]:
        """A check test for this node's quiet moves and the squares they must reach (`search.checks.quiet_check_test`)."""
        return quiet_check_test(self.board, self.mailbox)

    def legal_moves(self, in_check: bool | None = None) -> list[chess.Move]:
        """Every legal move, in python-chess's order; `in_check`: whether the side to move is, if the caller knows."""
        board = self.board
        if not self._plain:  # variants keep python-chess's rules
            return list(board.generate_legal_moves())
        if in_check is None:
            in_check = self.in_check()
        return evasions(board) if in_check else movegen_legal_moves(board)

    def tactical_moves(self, underpromotions: bool = False) -> list[chess.Move]:
        """Captures and promotions: queen promotions only for quiescence, all for the main search.

        The side to move is not in check (`search.movegen`'s generator).
        """
        board = self.board
        moves = legal_captures(board)
        promoting = promoting_pawns(board)
        if promoting:
            for move in movegen_legal_moves(board, promoting, ~board.occupied):
                if underpromotions or move.promotion == chess.QUEEN:
                    moves.append(move)
        return moves

    def no_moves_score(self, ply: int) -> int:
        """Checkmate (lost, sooner is worse) or stalemate."""
        return -MATE + ply if self.board.is_check() else 0

    def is_draw(self) -> bool:
        """Fifty-move rule or a repetition since the last irreversible move and the last null move.

        One repetition is enough inside the search: if the position can be
        repeated once, it can be repeated again, and scoring it as a draw
        early keeps the tree small.  This holds for positions of the game
        (the root and before) too, although the opponent need not repeat
        them: Stockfish's rule (those only at their third meeting) lost a
        non-regression SPRT against this one, 1,066 games at 8,000 nodes,
        -17.0 [-29.4, -4.6] (candidate 7c15d737, docs/search.md).
        Checkmate on the 100th half-move takes precedence over the
        fifty-move rule.  A position before a null move
        is not repeated by one after it (the line between them has a pass
        in it, which no game can play), so the scan stops there, as
        Stockfish's does.
        """
        board = self.board
        clock = board.halfmove_clock
        if clock >= 100:
            return not (board.is_check() and not any(board.generate_legal_moves()))
        history = self.history
        key = self.key
        # Same side to move means an even distance back, and at least four
        # plies: two cannot undo each other (each moves its own side's
        # pieces, and null moves never follow each other).  So -5, -7, ...
        for index in range(len(history) - 5, max(len(history) - clock - 2, self._null_floor), -2):
            if history[index] == key:
                return True
        return False

    def evaluate(self) -> int:
        """Static score for the side to move: the net's if there is one, else the classical one.

        Looked up by key first (`evals`); a miss computes and stores it.
        Tests check that the incremental score agrees with the net's
        from-scratch `Net.evaluate`, and that a search gives the same tree
        with or without the cache.
        """
        evals = self.evals
        score = evals.get(self.key)
        if score is not None:
            return score
        board = self.board
        if self._accumulator is None:
            score = finish(board, self.mg, self.eg, self.phase)
        else:
            score = self._accumulator.score(self.acc, board.turn, board.occupied.bit_count())
            if not -MAX_STATIC_SCORE <= score <= MAX_STATIC_SCORE:  # a net with an absurd output scale
                score = MAX_STATIC_SCORE if score > 0 else -MAX_STATIC_SCORE
        if len(evals) >= EVAL_CACHE_ENTRIES:
            evals.clear()
        evals[self.key] = score
        return score

    # --- make / unmake ----------------------------------------------------

    def push(self, move: chess.Move) -> None:
        """Play `move`, updating the key, the classical sums or the net's accumulator from the squares it touches.

        Hot path: written with local variables and table lookups only.
        """
        board = self.board
        us = board.turn
        them = not us
        frm = move.from_square
        to = move.to_square
        mailbox = self.mailbox
        piece = mailbox[frm]
        key, mg, eg, phase, acc = self.key, self.mg, self.eg, self.phase, self.acc
        accumulator = self._accumulator
        classical = accumulator is None  # only the classical evaluation reads mg, eg and phase

        mg_us, eg_us, z_us = MG_TABLE[us], EG_TABLE[us], ZOBRIST_PIECE[us]
        castles = piece == chess.KING and board.is_castling(move)
        if castles:
            # Lift king and rook first: in Chess960 either may land where
            # the other stood.
            to, rook_from, rook_to = _castling_squares(board, move)
            if classical:
                king_mg, king_eg, rook_mg, rook_eg = mg_us[chess.KING], eg_us[chess.KING], mg_us[chess.ROOK], eg_us[chess.ROOK]
                mg += king_mg[to] - king_mg[frm] + rook_mg[rook_to] - rook_mg[rook_from]
                eg += king_eg[to] - king_eg[frm] + rook_eg[rook_to] - rook_eg[rook_from]
            else:
                acc = accumulator.castled(acc, us, frm, to, rook_from, rook_to)
            key ^= z_us[chess.KING][frm] ^ z_us[chess.KING][to] ^ z_us[chess.ROOK][rook_from] ^ z_us[chess.ROOK][rook_to]
        else:
            placed = move.promotion or piece
            if classical:
                mg += mg_us[placed][to] - mg_us[piece][frm]
                eg += eg_us[placed][to] - eg_us[piece][frm]
                if move.promotion:
                    phase += PHASE_WEIGHT[placed]
            key ^= z_us[piece][frm] ^ z_us[placed][to]

            captured = mailbox[to]
            capture_square = to
            if captured is None and piece == chess.PAWN and to == board.ep_square and (frm - to) & 7:
                captured = chess.PAWN
                capture_square = to - 8 if us == chess.WHITE else to + 8
            if captured is not None:
                if classical:
                    mg -= MG_TABLE[them][captured][capture_square]
                    eg -= EG_TABLE[them][captured][capture_square]
                    phase -= PHASE_WEIGHT[captured]
                key ^= ZOBRIST_PIECE[them][captured][capture_square]
            if not classical:
                acc = accumulator.moved(acc, us, piece, frm, placed, to, captured, capture_square)

        rights = board.castling_rights
        chess960_rights = 0
        if rights and board.chess960 and (piece == chess.KING or rights & chess.BB_SQUARES[frm]
                                          or rights & chess.BB_SQUARES[to]):
            chess960_rights = _POLYGLOT.hash_castling(board)  # this move may change the rights
        if board.ep_square is not None:
            key ^= _ep_key(board)
        if self._plain and not castles:  # the board change inlined: python-chess's push, less its lookups
            # The mailbox's change, and in `_undo` what takes it back (the board's own snapshot last).
            mailbox[frm] = None
            mailbox[capture_square] = None
            mailbox[to] = placed
            self._undo.append((self.key, self.mg, self.eg, self.phase, self.acc, frm, piece, to, captured, capture_square,
                               push_plain(board, move, piece, captured, capture_square)))
        else:
            # Castling, or a variant's rules: the whole mailbox is saved.
            self._undo.append((self.key, self.mg, self.eg, self.phase, self.acc, None, None, None, None, None, mailbox[:]))
            board.push(move)
            if self._plain:  # castling: the king and the rook (lifted first: in Chess960 either may land where the other stood)
                mailbox[frm] = mailbox[rook_from] = None
                mailbox[to], mailbox[rook_to] = chess.KING, chess.ROOK
            else:
                mailbox[:] = mailbox_of(board)
        if board.castling_rights != rights:
            if board.chess960:  # (only moves touching a king or castling rook get here)
                key ^= chess960_rights ^ _POLYGLOT.hash_castling(board)
            else:
                key ^= castling_key(rights) ^ castling_key(board.castling_rights)
        key ^= ZOBRIST_TURN
        if board.ep_square is not None:
            key ^= _ep_key(board)

        self.key, self.mg, self.eg, self.phase, self.acc = key, mg, eg, phase, acc
        self.history.append(key)

    def pop(self) -> chess.Move:
        """Take back the last move or null move."""
        history = self.history
        history.pop()
        if len(history) <= self._null_floor + 1:  # the null move itself is taken back
            self._null_floor = self._null_floors.pop()
        self.key, self.mg, self.eg, self.phase, self.acc, frm, piece, to, captured, capture_square, saved = self._undo.pop()
        mailbox = self.mailbox
        if piece is not None:  # `push`'s ordinary move, taken back square by square; `saved`: the board's snapshot
            mailbox[to] = None
            mailbox[capture_square] = captured
            mailbox[frm] = piece
            return pop_plain(self.board, saved)
        if saved is not None:  # castling or a variant's move (a null move changed nothing)
            mailbox[:] = saved
        return self.board.pop()

    def push_null(self) -> None:
        """Pass the move (null move); only used by null-move pruning."""
        board = self.board
        self._undo.append((self.key, self.mg, self.eg, self.phase, self.acc, None, None, None, None, None, None))
        key = self.key ^ _ep_key(board)
        board.push(chess.Move.null())
        self.key = key ^ ZOBRIST_TURN
        self.history.append(self.key)
        self._null_floors.append(self._null_floor)
        self._null_floor = len(self.history) - 2


def _game_keys(board: chess.Board) -> list[int]:
    """Keys of the game's positions since the last irreversible move."""
    replay = board.copy(stack=True)
    keys = [chess.polyglot.zobrist_hash(replay)]
    for _ in range(min(board.halfmove_clock, len(board.move_stack))):
        replay.pop()
        keys.append(chess.polyglot.zobrist_hash(replay))
    keys.reverse()
    return keys
