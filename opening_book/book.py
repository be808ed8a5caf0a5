"""Polyglot opening book lookup for Pawnstorm.

The engine asks the book for a move before it starts searching. A book is a
nice-to-have, never a requirement: a missing or damaged book file must not
stop the engine from playing, so every failure here is turned into a
readable message in :attr:`OpeningBook.error` and an empty book.
"""

from __future__ import annotations

import importlib.resources
import os
import random
import struct
from pathlib import Path
from types import TracebackType
from typing import Optional, Type, Union

import chess
import chess.polyglot

#: One polyglot entry: key u64, move u16, weight u16, learn u32 (big-endian).
ENTRY_STRUCT = struct.Struct(">QHHI")

#: How many leading entries are checked on open. Enough to reject files that
#: are not polyglot books at all, while keeping startup time bounded for huge
#: books (the UCI handshake should not wait on a full scan).
_VALIDATE_ENTRIES = 1 << 16

StrPath = Union[str, "os.PathLike[str]"]


def default_book_path() -> Path:
    """Return the path of the book bundled with the package.

    ``importlib.resources`` is asked first because it knows where package data
    lives in every supported layout, including a PyInstaller one-file
    executable (where the data is unpacked below ``sys._MEIPASS``). The
    polyglot reader needs a real file to memory-map, so a resource that is not
    a plain filesystem path falls back to the directory of this module.
    """
    try:
        resource = importlib.resources.files("opening_book") / "data" / "default.bin"
    except (ImportError, TypeError, ValueError):
        resource = None
    if isinstance(resource, Path):
        return resource
    return Path(__file__).resolve().parent / "data" / "default.bin"


def book_problem(path: Path) -> Optional[str]:
    """Return why *path* is not a usable polyglot book, or ``None`` if it looks fine.

    Checks are cheap on purpose: existence, type, size, and that the first
    entries are sorted by key and carry plausible move encodings. A file that
    is not sorted cannot be binary-searched, so lookups would silently miss.
    """
    try:
        if not path.exists():
            return f"book file not found: {path}"
        if not path.is_file():
            return f"book path is not a file: {path}"
        size = path.stat().st_size
        if size == 0:
            return f"book file is empty: {path}"
        if size % ENTRY_STRUCT.size:
            return f"book file is corrupt: {path} (size not a multiple of {ENTRY_STRUCT.size} bytes)"
        with path.open("rb") as f:
            head = f.read(_VALIDATE_ENTRIES * ENTRY_STRUCT.size)
    except OSError as err:
        return f"book file is unreadable: {path} ({err.strerror or err})"

    previous_key = 0
    for index, (key, raw_move, _weight, _learn) in enumerate(ENTRY_STRUCT.iter_unpack(head)):
        if key < previous_key:
            return f"book file is corrupt: {path} (entry {index} is not sorted by key)"
        if raw_move >> 15 or (raw_move >> 12) & 0x7 > 4:
            return f"book file is corrupt: {path} (entry {index} has an invalid move encoding)"
        previous_key = key
    return None


class OpeningBook:
    """A polyglot opening book that never raises.

    >>> import chess
    >>> from opening_book import OpeningBook
    >>>
    >>> with OpeningBook() as book:
    ...     move = book.choose(chess.Board())

    If the file cannot be used, :attr:`error` describes why and the book
    behaves as if it were empty, so callers only need to handle ``None``.
    """

    path: Path
    """The book file this instance reads from."""

    error: Optional[str]
    """Human-readable reason why the book is unusable, or ``None``."""

    def __init__(self, path: Optional[StrPath] = None) -> None:
        self.path = default_book_path() if path is None else Path(path)
        self.error = book_problem(self.path)
        self._reader: Optional[chess.polyglot.MemoryMappedReader] = None
        self._rng = random.Random()
        if self.error is None:
            try:
                self._reader = chess.polyglot.open_reader(self.path)
            except (OSError, ValueError) as err:
                self.error = f"book file is unreadable: {self.path} ({err})"

    def _entries(self, board: chess.Board) -> list[tuple[chess.Move, int]]:
        """Return the legal book moves for *board* with their weights, merged per move.

        Duplicate entries for the same move (for example both polyglot and
        standard castling encodings) are summed so that :meth:`moves` and
        :meth:`choose` agree on the odds. Probing errors mean the file is
        damaged beyond what :func:`book_problem` can see, so the book disables
        itself rather than fail again on every move.
        """
        if self._reader is None:
            return []
        weights: dict[chess.Move, int] = {}
        try:
            for entry in self._reader.find_all(board, minimum_weight=0):
                if entry.move in board.legal_moves:
                    weights[entry.move] = weights.get(entry.move, 0) + entry.weight
        except Exception as err:  # A corrupt mmap can fail in many ways.
            self.error = f"book file is corrupt: {self.path} ({type(err).__name__}: {err})"
            self.close()
            return []
        return list(weights.items())

    def moves(self, board: chess.Board) -> list[tuple[chess.Move, int]]:
        """List the legal book moves for *board* as ``(move, weight)``, heaviest first.

        Public API for inspecting a book (what the engine may play here, and
        how often); the engine itself only calls :meth:`choose`.
        """
        return sorted(self._entries(board), key=lambda item: item[1], reverse=True)

    def choose(self, board: chess.Board, rng: Optional[random.Random] = None) -> Optional[chess.Move]:
        """Pick a book move for *board* with probability proportional to its weight.

        Weight ``0`` conventionally marks a deleted entry, so such moves are
        only played when every entry of the position has weight ``0`` (then
        they are picked uniformly). Returns ``None`` when out of book.
        """
        entries = self._entries(board)
        if not entries:
            return None
        if any(weight for _, weight in entries):
            entries = [(move, weight) for move, weight in entries if weight]
        else:
            entries = [(move, 1) for move, _ in entries]

        rng = self._rng if rng is None else rng
        pick = rng.randrange(sum(weight for _, weight in entries))
        for move, weight in entries:
            pick -= weight
            if pick < 0:
                return move
        raise AssertionError("unreachable: pick is below the total weight")

    def close(self) -> None:
        """Release the memory-mapped file. The book behaves as empty afterwards."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> OpeningBook:
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc_value: Optional[BaseException], traceback: Optional[TracebackType]) -> None:
        self.close()

    def __repr__(self) -> str:
        status = "ok" if self.error is None else self.error
        return f"<OpeningBook {str(self.path)!r} ({status})>"
