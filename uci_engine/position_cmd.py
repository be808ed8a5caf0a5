"""Parsing `position` and `go`: turn GUI text into a board and search limits.

Both parsers are forgiving: they return what they could understand plus
messages for the GUI about what they could not, and never raise.
"""
from __future__ import annotations

import chess

from search.timeman import Limits

#: Largest number accepted for any `go` parameter (about 11 days in ms);
#: huge values are clamped instead of overflowing anything downstream.
MAX_GO_VALUE = 1_000_000_000


def parse_position(tokens: list[str], current: chess.Board, chess960: bool = False) -> tuple[chess.Board, list[str]]:
    """`position startpos|fen <fen> [moves m1 m2 ...]` → (board, messages).

    With `chess960` (the GUI set UCI_Chess960) castling rights may name any
    rook (Shredder-FEN `HAha` or X-FEN `KQkq`) and castling moves are written
    king-takes-rook, e.g. `e1h1`.

    Defined behaviour on bad input (documented in the README):
    * a malformed or impossible FEN is rejected and the previous position is
      kept unchanged; words after a FEN's six fields (or after `startpos`)
      are reported and ignored;
    * an illegal or unparsable move, or the null move `0000` (a pass is no
      move of a game), stops the move list there: the moves before it are
      played, the rest ignored.

    A promotion letter may come in upper case (`a7a8Q`), as some GUIs send it.
    """
    messages: list[str] = []
    if not tokens:
        return current, ["position: expected 'startpos' or 'fen'; position unchanged"]
    if "moves" in tokens:
        at = tokens.index("moves")
        setup, moves = tokens[:at], tokens[at + 1:]
    else:
        setup, moves = tokens, []

    if not setup:
        return current, ["position: expected 'startpos' or 'fen' before 'moves'; position unchanged"]
    # A FEN has six fields at most: what follows them (or `startpos`) is no part of the
    # position, most likely moves without the word `moves`.  Ignored, as Stockfish does, but said.
    fields = 1 if setup[0] == "startpos" else 7
    if len(setup) > fields:
        messages.append(f"position: ignored {' '.join(setup[fields:])!r} after the position"
                        " (moves follow the word 'moves')")
        setup = setup[:fields]
    if setup[0] == "startpos":
        board = chess.Board(chess960=chess960)
    elif setup[0] == "fen":
        fen = " ".join(setup[1:])
        board_or_error = board_from_fen(fen, chess960)
        if isinstance(board_or_error, str):
            return current, [f"position: {board_or_error}; position unchanged"]
        board, fixes = board_or_error
        messages.extend(fixes)
    else:
        return current, [f"position: expected 'startpos' or 'fen', got {setup[0]!r}; position unchanged"]

    for index, text in enumerate(moves):
        move = legal_move(board, text)
        if move is None:
            messages.append(
                f"position: illegal move {text!r} (move {index + 1} of {len(moves)}) in "
                f"{board.fen()}; kept the position before it, ignored the rest"
            )
            break
        board.push(move)
    return board, messages


def legal_move(board: chess.Board, text: str) -> chess.Move | None:
    """The legal move `text` names on `board` (UCI notation, any case of promotion letter), or None.

    The null move `0000` is None too: python-chess parses it, but playing it
    would hand the move to a side that may be giving check.
    """
    try:
        move = board.parse_uci(_lower_promotion(text))
    except ValueError:  # includes IllegalMoveError / InvalidMoveError
        return None
    return move or None


def _lower_promotion(text: str) -> str:
    """`a7a8Q` -> `a7a8q`: the square names stay as written (an upper-case one is still wrong)."""
    return text[:4] + text[4:].lower()


def board_from_fen(fen: str, chess960: bool = False) -> tuple[chess.Board, list[str]] | str:
    """A playable board from `fen`, with repairs listed; or why it is rejected."""
    if not fen.strip():
        return "empty FEN"
    try:
        board = chess.Board(fen, chess960=chess960)
    except ValueError as error:
        return f"invalid FEN {fen!r} ({error})"
    fixes = []
    status = board.status()
    if status & chess.STATUS_BAD_CASTLING_RIGHTS:
        board.castling_rights = board.clean_castling_rights()
        fixes.append(f"FEN {fen!r}: impossible castling rights dropped")
    if status & chess.STATUS_INVALID_EP_SQUARE:
        board.ep_square = None
        fixes.append(f"FEN {fen!r}: impossible en passant square dropped")
    status = board.status()
    if status != chess.STATUS_VALID:
        problems = ", ".join(flag.name.lower().replace("_", " ") for flag in chess.Status if flag and flag in status)
        return f"impossible position in FEN {fen!r} ({problems})"
    return board, fixes


_INT_FIELDS = ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "nodes", "mate")
_KEYWORDS = frozenset(_INT_FIELDS + ("infinite", "ponder", "searchmoves", "perft"))


def parse_go(tokens: list[str]) -> tuple[Limits, int | None, list[str]]:
    """`go ...` → (limits, perft depth or None, messages).

    A parameter with a missing or malformed number is reported and ignored; a
    `go perft` without a valid depth is reported and does nothing (perft depth
    0 is returned so that no search starts).
    """
    limits = Limits()
    messages: list[str] = []
    perft_depth = None
    index = 0
    while index < len(tokens):
        word = tokens[index]
        index += 1
        if word == "infinite":
            limits.infinite = True
        elif word == "ponder":
            limits.ponder = True
        elif word == "searchmoves":
            moves = []
            while index < len(tokens) and _looks_like_move(tokens[index]):
                moves.append(tokens[index])
                index += 1
            limits.searchmoves = moves
        elif word in _INT_FIELDS or word == "perft":
            text = tokens[index] if index < len(tokens) and tokens[index] not in _KEYWORDS else None
            if text is not None:
                index += 1
            value = _parse_int(text)
            if value is None:
                messages.append(f"go: {word} needs a number, got {text!r}; ignored")
                if word == "perft":
                    perft_depth = 0
                continue
            value = min(value, MAX_GO_VALUE)
            if word == "perft":
                perft_depth = max(1, value)
                continue
            if value < 0:
                messages.append(f"go: negative {word} {value} treated as 0")
                value = 0
            setattr(limits, word, value)
        else:
            messages.append(f"go: unknown parameter {word!r} ignored")
    if limits.depth is not None:
        limits.depth = max(1, limits.depth)
    if limits.movestogo is not None and limits.movestogo <= 0:
        limits.movestogo = None
    return limits, perft_depth, messages


def _parse_int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(float(text))
    except (ValueError, OverflowError):
        return None


def _looks_like_move(token: str) -> bool:
    try:
        chess.Move.from_uci(_lower_promotion(token))
    except ValueError:
        return False
    return True
