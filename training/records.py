"""Labelled training positions: the record, and the chunk files that hold them.

Two chunk formats, told apart by the file's suffix and then its magic:

* version 2, ``<chunk>.psd.xz`` (`training.packed`): what `write_chunk`
  writes; positions stored as the moves between them, about 4.6 bytes a
  position;
* version 1, ``<chunk>.psd.gz`` (below): 32 bytes a record before gzip,
  about 13 after.  Still read, so that data made before version 2 loads
  until `training.convert` has turned it into version 2.

Both decode to the same 32-byte records, which are what the rest of
`training` works on (the trainer reads them with one numpy `frombuffer`).

A version 1 chunk file is gzip-compressed and holds a 16-byte header followed by
fixed-size 32-byte records, all little-endian:

header
    ``magic``  4 bytes ``b"PSTD"``
    ``version`` u16 (1)
    ``record_size`` u16 (32)
    ``count``  u32, the number of records that follow
    ``crc32``  u32 of the record bytes (zlib's CRC-32)

record (32 bytes)
    ``occupied``  u64, the occupied squares (bit i = square i, a1 = 0)
    ``pieces``    16 bytes, one 4-bit code per occupied square in ascending
                  square order, low nibble first: code = 6 * colour + type - 1
                  (colour 0 = White, type 1..6 = pawn..king), unused nibbles 0
    ``score``     i16, the teacher's score in centipawns from the side to
                  move's view; mates are stored as +-MATE_SCORE
    ``result``    u8, the game's result for the side to move: 0 loss, 1 draw, 2 win,
                  3 unknown (a position off the game's line, e.g. from a search tree)
    ``turn``      u8, 0 White to move, 1 Black
    ``fullmove``  u16, the move number
    ``halfmove``  u8, the halfmove clock (capped at 255)
    ``ply_flags`` u8, reserved (0)

Castling rights and the en-passant square are not stored: the evaluation's
features (piece on square) do not see them.  Why a fixed-size record and not
FEN text: 32 bytes instead of ~60 before compression, and numpy can read a
whole chunk with one `frombuffer` call.
"""
from __future__ import annotations

import gzip
import lzma
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import chess

#: A chunk file's suffixes: version 2 (written) and version 1 (read only).
SUFFIX, SUFFIX_V1 = ".psd.xz", ".psd.gz"
MAGIC = b"PSTD"
VERSION = 1
RECORD_SIZE = 32
HEADER = struct.Struct("<4sHHII")
RECORD = struct.Struct("<Q16shBBHBB")
#: Stored in place of a mate score (any mate, either distance).
MATE_SCORE = 20000
#: `Record.result` of a position whose game result says nothing about it.
RESULT_UNKNOWN = 3
assert HEADER.size == 16 and RECORD.size == RECORD_SIZE


class DataFormatError(ValueError):
    """A chunk file that is not a valid record file; the message names file and offset."""


@dataclass(frozen=True)
class Record:
    """One labelled position."""

    board: chess.Board
    score: int  # side to move's view, cp (or +-MATE_SCORE)
    result: int  # side to move: 0 loss, 1 draw, 2 win, RESULT_UNKNOWN

    @property
    def identity(self) -> tuple[int, bytes, bool]:
        """What the features see (pieces and side to move): the de-duplication key."""
        return _pack_pieces(self.board) + (self.board.turn,)


def _pack_pieces(board: chess.Board) -> tuple[int, bytes]:
    occupied = board.occupied
    nibbles = bytearray(16)
    for index, square in enumerate(chess.scan_forward(occupied)):
        piece = board.piece_at(square)
        assert piece is not None
        code = 6 * (not piece.color) + piece.piece_type - 1
        nibbles[index >> 1] |= code << (4 * (index & 1))
    return occupied, bytes(nibbles)


def encode(record: Record) -> bytes:
    board = record.board
    occupied, nibbles = _pack_pieces(board)
    score = max(-MATE_SCORE, min(MATE_SCORE, record.score))
    return RECORD.pack(occupied, nibbles, score, record.result, int(not board.turn),
                       min(board.fullmove_number, 65535), min(board.halfmove_clock, 255), 0)


def decode(data: bytes, offset: int = 0, name: str = "<bytes>", base: int = 0) -> Record:
    """One record, validated (the error names `name` and the byte offset `base + offset`)."""
    occupied, nibbles, score, result, turn, fullmove, halfmove, _ = RECORD.unpack_from(data, offset)
    squares = list(chess.scan_forward(occupied))
    problem = None
    if len(squares) > 32:
        problem = f"{len(squares)} occupied squares"
    elif result > RESULT_UNKNOWN or turn > 1:
        problem = f"result {result} / turn {turn} out of range"
    board = chess.Board(None)
    if problem is None:
        for index, square in enumerate(squares):
            code = (nibbles[index >> 1] >> (4 * (index & 1))) & 15
            if code >= 12:
                problem = f"piece code {code}"
                break
            board.set_piece_at(square, chess.Piece(code % 6 + 1, code < 6))
    if problem is None and (len(board.pieces(chess.KING, chess.WHITE)) != 1 or len(board.pieces(chess.KING, chess.BLACK)) != 1):
        problem = "not exactly one king a side"
    if problem is not None:
        raise DataFormatError(f"{name}: bad record at offset {base + offset}: {problem}")
    board.turn = turn == 0
    board.fullmove_number = fullmove
    board.halfmove_clock = halfmove
    return Record(board, score, result)


def chunk_name(path: Path) -> str:
    """The chunk's name, e.g. ``play-0042``, whichever version its file is."""
    name = Path(path).name
    for suffix in (SUFFIX, SUFFIX_V1):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def chunk_paths(directory: Path) -> list[Path]:
    """Every chunk file of a directory, in the order of their names (either version)."""
    directory = Path(directory)
    return sorted([*directory.glob("*" + SUFFIX), *directory.glob("*" + SUFFIX_V1)], key=chunk_name)


def chunk_exists(directory: Path, name: str) -> bool:
    """Whether chunk `name` has a file in `directory`, in either version."""
    return any((Path(directory) / (name + suffix)).exists() for suffix in (SUFFIX, SUFFIX_V1))


def write_chunk(path: Path, records: Iterable[Record]) -> int:
    """Write records to `path` atomically (a temporary name, then rename); returns the count.

    A ``.psd.xz`` path gets version 2, anything else version 1 (kept for
    the tests of the version 1 reader).
    """
    body = b"".join(encode(record) for record in records)
    path = Path(path)
    if path.name.endswith(SUFFIX):
        from training.packed import pack  # packed builds on this module's record layout
        write_atomically(path, pack(body))
        return len(body) // RECORD_SIZE
    count = len(body) // RECORD_SIZE
    header = HEADER.pack(MAGIC, VERSION, RECORD_SIZE, count, zlib.crc32(body))
    # mtime=0 (and gzip's stored name, the temporary one): the same records
    # under the same name give the same bytes, whenever they are written.
    write_atomically(path, gzip.compress(header + body, 9, mtime=0))
    return count


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` under a temporary name, then rename: a reader never sees half a file."""
    partial = path.with_name(path.name + ".part")
    partial.write_bytes(data)
    partial.replace(path)


def read_raw(path: Path) -> bytes:
    """The validated record bytes of a chunk file of either version (header and CRC checked)."""
    name = str(path)
    xz = name.endswith(SUFFIX)
    try:
        data = lzma.decompress(Path(path).read_bytes()) if xz else gzip.decompress(Path(path).read_bytes())
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as error:
        raise DataFormatError(f"{name}: cannot decompress ({error})") from None
    if xz:
        from training.packed import unpack
        return unpack(data, name)
    return _unpack_v1(data, name)


def _unpack_v1(data: bytes, name: str) -> bytes:
    if len(data) < HEADER.size:
        raise DataFormatError(f"{name}: truncated header at offset 0 ({len(data)} bytes)")
    magic, version, size, count, crc = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise DataFormatError(f"{name}: bad magic {magic!r} at offset 0")
    if version != VERSION or size != RECORD_SIZE:
        raise DataFormatError(f"{name}: unsupported version {version} / record size {size} at offset 4")
    body = data[HEADER.size:]
    if len(body) != count * RECORD_SIZE:
        whole = len(body) // RECORD_SIZE
        raise DataFormatError(
            f"{name}: truncated at offset {HEADER.size + whole * RECORD_SIZE}: header promises {count} records, "
            f"the file holds {len(body) / RECORD_SIZE:.2f}")
    if zlib.crc32(body) != crc:
        raise DataFormatError(f"{name}: checksum mismatch over the records at offset {HEADER.size}")
    return body


def read_chunk(path: Path) -> list[Record]:
    """Every record of a chunk file, each validated."""
    body = read_raw(path)
    return [decode(body, offset, str(path), HEADER.size) for offset in range(0, len(body), RECORD_SIZE)]
