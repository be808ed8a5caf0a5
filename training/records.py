"""Labelled training positions: the 32-byte record every chunk format decodes to.

The rest of `training` works on these records (the trainer reads them with
one numpy `frombuffer`); `training.chunks` stores them in files and shards,
`training.packed` compresses them as the moves between positions.

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

import struct
from dataclasses import dataclass

import chess

#: The version 1 chunk file's header (`training.chunks`).
MAGIC_V1 = b"PSTD"
VERSION_V1 = 1
RECORD_SIZE = 32
HEADER_V1 = struct.Struct("<4sHHII")
RECORD = struct.Struct("<Q16shBBHBB")
#: Stored in place of a mate score (any mate, either distance).
MATE_SCORE = 20000
#: `Record.result` of a position whose game result says nothing about it.
RESULT_UNKNOWN = 3
assert HEADER_V1.size == 16 and RECORD.size == RECORD_SIZE


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
