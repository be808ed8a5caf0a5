"""Version 2 of the chunk format (`.psd.xz`): positions stored as the moves that made them.

Most labelled positions come from games, and a game's next kept position is
its previous one plus a ply or two (positions in check or with a capture for
best move are dropped in between).  So, as Stockfish's binpack does, a record
is stored as the plies that lead to it from the record before it: two bytes
a ply instead of 28 bytes of board.  Where no short sequence of plies
explains a record (a game's first position, a position drawn from a search
tree), the board is stored whole.  Positions: about 3.5 bytes each for
game chunks, against 13 for version 1 (docs/nnue.md, "Storage").

The file is xz-compressed (`lzma`, preset 9 extreme) and holds, little-endian:

header (28 bytes)
    ``magic`` 4 bytes ``b"PSTP"``; ``version`` u16 (2); ``reserved`` u16 (0);
    ``count`` u32, the records; ``crc32`` u32 of the records as version 1
    bytes (`training.records`), so the check covers what decoding rebuilds;
    ``plies`` u32, the plies stored; ``boards`` u32, the whole boards stored;
    ``reserved`` u32 (0)
streams, one after the other (byte planes: xz finds more in each alone)
    ``steps``    u8 per record: how many plies lead to it from the record
                 before, 0 for a board stored whole
    ``origins``  u8 per ply: the square the piece leaves (a1 = 0)
    ``targets``  u8 per ply: ``to | promotion << 6`` (promotion 0 none or
                 a queen, told apart by the piece: see `apply`; 1..3 knight,
                 bishop, rook)
    ``boards``   28 bytes per whole board: version 1's record less its
                 score, result and flags (``occupied`` u64, ``pieces`` 16
                 bytes, ``turn`` u8, ``fullmove`` u16, ``halfmove`` u8)
    ``scores``   two planes of a u16 per record, low bytes then high bytes:
                 the change of the teacher's score from White's view since
                 the record before (modulo 2**16, zigzag-coded: small
                 changes of either sign are small numbers)
    ``results``  u8 per record

A ply is applied to the piece placement without any move generator: the
piece on ``from`` goes to ``to`` (promoted if asked), a king moving two files
takes its rook along (castling), a pawn moving diagonally to an empty square
takes the pawn beside it (en passant); the halfmove clock restarts on a pawn
move or a capture, the fullmove number grows after Black's ply.  Legality
plays no part: the writer keeps a ply sequence only if decoding it rebuilds
the record exactly, so the format is lossless by construction.
"""
from __future__ import annotations

import lzma
import struct
import zlib
from typing import Iterator

import chess

from training.records import RECORD, RECORD_SIZE, DataFormatError

MAGIC = b"PSTP"
VERSION = 2
HEADER = struct.Struct("<4sHHIIIII")
BOARD = struct.Struct("<Q16sBHB")
#: Longest ply sequence searched for between two records.
MAX_PLIES = 4
XZ_PRESET = 9 | lzma.PRESET_EXTREME
assert HEADER.size == 28 and BOARD.size == 28

EMPTY = -1
PAWN_CODES = (0, 6)  # code = 6 * colour + type - 1, colour 0 = White
KING_CODES = (5, 11)


class State:
    """A record's board part: piece code per square (EMPTY or 0..11), turn (0 White), clocks."""

    __slots__ = ("codes", "turn", "fullmove", "halfmove")

    def __init__(self, codes: list[int], turn: int, fullmove: int, halfmove: int) -> None:
        self.codes = codes
        self.turn = turn
        self.fullmove = fullmove
        self.halfmove = halfmove

    def key(self) -> tuple:
        return tuple(self.codes), self.turn, self.fullmove, self.halfmove

    @property
    def ply(self) -> int:
        """Plies since the game's start, as the move counters say."""
        return 2 * (self.fullmove - 1) + self.turn


# --- boards <-> version 1 record bytes -------------------------------------------

def state_of(record: bytes, offset: int = 0) -> State:
    occupied, nibbles, _score, _result, turn, fullmove, halfmove, _flags = RECORD.unpack_from(record, offset)
    codes = [EMPTY] * 64
    for index, square in enumerate(chess.scan_forward(occupied)):
        codes[square] = (nibbles[index >> 1] >> (4 * (index & 1))) & 15
    return State(codes, turn, fullmove, halfmove)


def board_bytes(state: State) -> bytes:
    """The 28 bytes of a whole board (the ``boards`` stream's entry)."""
    occupied = 0
    nibbles = bytearray(16)
    index = 0
    for square, code in enumerate(state.codes):
        if code != EMPTY:
            occupied |= 1 << square
            nibbles[index >> 1] |= code << (4 * (index & 1))
            index += 1
    return BOARD.pack(occupied, bytes(nibbles), state.turn, state.fullmove, state.halfmove)


def record_bytes(state: State, score: int, result: int) -> bytes:
    occupied, nibbles, turn, fullmove, halfmove = BOARD.unpack(board_bytes(state))
    return RECORD.pack(occupied, nibbles, score, result, turn, fullmove, halfmove, 0)


# --- plies ---------------------------------------------------------------------

def apply(state: State, move: int) -> State:
    """The state after one stored ply (see the module docstring for the rules)."""
    origin, target, promotion = move & 63, (move >> 6) & 63, move >> 12
    codes = state.codes.copy()
    piece = codes[origin]
    captured = codes[target]
    pawn = piece in PAWN_CODES
    codes[origin] = EMPTY
    if pawn and captured == EMPTY and (origin ^ target) & 7:
        codes[(origin & 56) | (target & 7)] = EMPTY  # en passant
        captured = 0
    if piece in KING_CODES and abs((origin & 7) - (target & 7)) == 2:
        rank = origin & 56
        rook_from, rook_to = (rank | 7, rank | 5) if target & 7 == 6 else (rank, rank | 3)
        codes[rook_to], codes[rook_from] = codes[rook_from], EMPTY
    codes[target] = piece - piece % 6 + promotion if promotion else piece
    halfmove = 0 if pawn or captured != EMPTY else min(state.halfmove + 1, 255)
    fullmove = min(state.fullmove + 1, 65535) if state.turn else state.fullmove
    return State(codes, state.turn ^ 1, fullmove, halfmove)


def _targets(codes: list[int], origin: int, occupied: int) -> Iterator[tuple[int, int]]:
    """(to, promotion) of the piece on `origin`, pseudo-legal by its pattern (captures of either colour)."""
    code = codes[origin]
    kind = code % 6 + 1
    if kind == chess.PAWN:
        white = code < 6
        step = 8 if white else -8
        ahead = origin + step
        squares = []
        if 0 <= ahead < 64:
            if codes[ahead] == EMPTY:
                squares.append(ahead)
                start = 1 if white else 6
                if origin >> 3 == start and codes[ahead + step] == EMPTY:
                    squares.append(ahead + step)
            squares += list(chess.scan_forward(chess.BB_PAWN_ATTACKS[white][origin]))
        last = 7 if white else 0
        for square in squares:
            if square >> 3 == last:
                for promotion in (4, 1, 2, 3):
                    yield square, promotion
            else:
                yield square, 0
        return
    if kind == chess.KNIGHT:
        attacks = chess.BB_KNIGHT_ATTACKS[origin]
    elif kind == chess.KING:
        attacks = chess.BB_KING_ATTACKS[origin]
        if origin in (chess.E1, chess.E8):
            attacks |= chess.BB_SQUARES[origin + 2] | chess.BB_SQUARES[origin - 2]
    else:
        attacks = 0
        if kind in (chess.BISHOP, chess.QUEEN):
            attacks |= chess.BB_DIAG_ATTACKS[origin][chess.BB_DIAG_MASKS[origin] & occupied]
        if kind in (chess.ROOK, chess.QUEEN):
            attacks |= (chess.BB_RANK_ATTACKS[origin][chess.BB_RANK_MASKS[origin] & occupied]
                        | chess.BB_FILE_ATTACKS[origin][chess.BB_FILE_MASKS[origin] & occupied])
    for square in chess.scan_forward(attacks):
        yield square, 0


def find_plies(before: State, after: State) -> list[int] | None:
    """Plies that turn `before` into `after` exactly (at most MAX_PLIES), or None.

    The number of plies is fixed by the move counters; the search tries only
    pieces on squares where the two boards differ (a piece that left and came
    back is not found, and its record is stored whole).
    """
    plies = after.ply - before.ply
    if not 1 <= plies <= MAX_PLIES:
        return None
    goal = after.key()
    return _search(before, after, goal, plies)


def _search(state: State, after: State, goal: tuple, plies: int) -> list[int] | None:
    differ = [square for square in range(64) if state.codes[square] != after.codes[square]]
    if not differ or len(differ) > 4 * plies:
        return None
    colour = state.turn
    occupied = sum(1 << square for square, code in enumerate(state.codes) if code != EMPTY)
    for origin in differ:
        code = state.codes[origin]
        if code == EMPTY or code // 6 != colour:
            continue
        for target, promotion in _targets(state.codes, origin, occupied):
            if plies == 1 and target not in differ:
                continue
            move = origin | target << 6 | promotion << 12
            child = apply(state, move)
            if plies == 1:
                if child.key() == goal:
                    return [move]
            else:
                rest = _search(child, after, goal, plies - 1)
                if rest is not None:
                    return [move] + rest
    return None


# --- files ---------------------------------------------------------------------

def _target_byte(move: int) -> int:
    """A ply's ``targets`` entry: the queen, by far the commonest promotion, shares code 0 with none."""
    promotion = move >> 12
    return (move >> 6) & 63 | (0 if promotion in (0, 4) else promotion) << 6


def _move(origin: int, target_byte: int, codes: list[int]) -> int:
    """The inverse of `_target_byte`, given the board the ply is played on."""
    target, promotion = target_byte & 63, target_byte >> 6
    if promotion == 0 and codes[origin] in PAWN_CODES and target >> 3 in (0, 7):
        promotion = 4
    return origin | target << 6 | promotion << 12


def _zigzag(value: int) -> int:
    value = (value + 32768) % 65536 - 32768  # to int16, modulo 2**16
    return ((value << 1) ^ (value >> 15)) & 0xFFFF


def _unzigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def _white(score: int, turn: int) -> int:
    return -score if turn else score


def pack(body: bytes) -> bytes:
    """Version 1 record bytes -> the xz-compressed version 2 file's bytes."""
    if len(body) % RECORD_SIZE:
        raise ValueError("record bytes must be a whole number of records")
    count = len(body) // RECORD_SIZE
    steps, origins, targets, boards, results = bytearray(), bytearray(), bytearray(), bytearray(), bytearray()
    scores_low, scores_high = bytearray(), bytearray()
    previous: State | None = None
    previous_white = 0
    for offset in range(0, len(body), RECORD_SIZE):
        _occ, _pieces, score, result, turn, _full, _half, flags = RECORD.unpack_from(body, offset)
        if flags:
            raise ValueError(f"record at offset {offset} has flags {flags}: version 2 does not store them")
        state = state_of(body, offset)
        path = find_plies(previous, state) if previous is not None else None
        if path is None:
            steps.append(0)
            boards += board_bytes(state)
        else:
            steps.append(len(path))
            origins += bytes(move & 63 for move in path)
            targets += bytes(_target_byte(move) for move in path)
        change = _zigzag(_white(score, turn) - previous_white)
        scores_low.append(change & 255)
        scores_high.append(change >> 8)
        results.append(result)
        previous, previous_white = state, _white(score, turn)
    header = HEADER.pack(MAGIC, VERSION, 0, count, zlib.crc32(body), len(origins), len(boards) // BOARD.size, 0)
    streams = steps + origins + targets + boards + scores_low + scores_high + results
    return lzma.compress(header + streams, preset=XZ_PRESET)


def unpack(data: bytes, name: str = "<bytes>") -> bytes:
    """Decompressed version 2 bytes -> version 1 record bytes, validated (errors name the offset)."""
    if len(data) < HEADER.size:
        raise DataFormatError(f"{name}: truncated header at offset 0 ({len(data)} bytes)")
    magic, version, _reserved, count, crc, n_plies, n_boards, _spare = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise DataFormatError(f"{name}: bad magic {magic!r} at offset 0")
    if version != VERSION:
        raise DataFormatError(f"{name}: unsupported version {version} at offset 4")
    at_origins = HEADER.size + count
    at_targets = at_origins + n_plies
    at_boards = at_targets + n_plies
    at_scores = at_boards + n_boards * BOARD.size
    at_results = at_scores + 2 * count
    if len(data) != at_results + count:
        raise DataFormatError(f"{name}: stream lengths do not match the header at offset 12 "
                              f"({len(data)} bytes, expected {at_results + count} for {count} records)")
    out = bytearray()
    ply, board = 0, 0
    state: State | None = None
    white = 0
    for index in range(count):
        steps = data[HEADER.size + index]
        if steps == 0:
            if board >= n_boards:
                raise DataFormatError(f"{name}: more whole boards than the header's {n_boards} at offset "
                                      f"{HEADER.size + index}")
            state = _state_from_board(data, at_boards + board * BOARD.size, name)
            board += 1
        else:
            if state is None or ply + steps > n_plies:
                raise DataFormatError(f"{name}: bad ply count {steps} at offset {HEADER.size + index}")
            for _ in range(steps):
                state = _checked_apply(state, data[at_origins + ply], data[at_targets + ply], name, at_origins + ply)
                ply += 1
        white = (white + _unzigzag(data[at_scores + index] | data[at_scores + count + index] << 8) + 32768) % 65536 - 32768
        out += record_bytes(state, _white(white, state.turn), data[at_results + index])
    if ply != n_plies or board != n_boards:
        raise DataFormatError(f"{name}: {n_plies - ply} plies and {n_boards - board} boards left over (header offset 20)")
    if zlib.crc32(out) != crc:
        raise DataFormatError(f"{name}: checksum mismatch over the decoded records (header offset 16)")
    return bytes(out)


def _state_from_board(data: bytes, offset: int, name: str) -> State:
    occupied, nibbles, turn, fullmove, halfmove = BOARD.unpack_from(data, offset)
    squares = list(chess.scan_forward(occupied))
    if len(squares) > 32 or turn > 1:
        raise DataFormatError(f"{name}: bad board at offset {offset}")
    codes = [EMPTY] * 64
    for index, square in enumerate(squares):
        codes[square] = (nibbles[index >> 1] >> (4 * (index & 1))) & 15
        if codes[square] >= 12:
            raise DataFormatError(f"{name}: bad piece code at offset {offset}")
    return State(codes, turn, fullmove, halfmove)


def _checked_apply(state: State, origin: int, target_byte: int, name: str, offset: int) -> State:
    if origin > 63 or state.codes[origin] == EMPTY:
        raise DataFormatError(f"{name}: bad move at offset {offset} (no piece on square {origin})")
    return apply(state, _move(origin, target_byte, state.codes))


def is_packed(data: bytes) -> bool:
    return data[:4] == MAGIC
