"""Tests for the opening_book package: lookup, error handling and the build tool."""

from __future__ import annotations

import collections
import random
import struct
from pathlib import Path

import chess
import chess.polyglot
import pytest

from opening_book import OpeningBook, default_book_path
from opening_book.build import build_book, main

ENTRY = struct.Struct(">QHHI")

SICILIAN = "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3"
OUT_OF_BOOK_FEN = "r4rk1/1bq1bppp/p2ppn2/1p4B1/3NPP2/2N2Q2/PPP3PP/2KR1B1R w - - 0 13"


def board_after(sans: str) -> chess.Board:
    board = chess.Board()
    for san in sans.split():
        board.push_san(san)
    return board


def raw_move(uci: str) -> int:
    """Polyglot move encoding: to | from << 6 | promotion << 12 (castling stays king-takes-rook)."""
    move = chess.Move.from_uci(uci)
    promotion = move.promotion - 1 if move.promotion else 0
    return move.to_square | move.from_square << 6 | promotion << 12


def entry(sans: str, uci: str, weight: int, learn: int = 0) -> tuple[int, int, int, int]:
    return (chess.polyglot.zobrist_hash(board_after(sans)), raw_move(uci), weight, learn)


def write_book(path: Path, rows: list[tuple[int, int, int, int]]) -> Path:
    path.write_bytes(b"".join(ENTRY.pack(*row) for row in sorted(rows, key=lambda r: (r[0], -r[2]))))
    return path


def read_rows(path: Path) -> list[tuple[int, int, int, int]]:
    return list(ENTRY.iter_unpack(path.read_bytes()))


@pytest.fixture(scope="module")
def book():
    with OpeningBook() as opened:
        yield opened


# Bundled book.


def test_default_book_exists(book: OpeningBook) -> None:
    assert default_book_path().is_file()
    assert book.error is None


@pytest.mark.parametrize("sans", ["", "e4", SICILIAN])
def test_default_book_gives_legal_move(book: OpeningBook, sans: str) -> None:
    board = board_after(sans)
    move = book.choose(board, random.Random(1))
    assert move is not None
    assert move in board.legal_moves


def test_choice_is_weighted(book: OpeningBook) -> None:
    board = chess.Board()
    listed = book.moves(board)
    weights = [weight for _, weight in listed]
    assert weights == sorted(weights, reverse=True)
    assert len(listed) > 1

    rng = random.Random(12345)
    counts = collections.Counter(book.choose(board, rng) for _ in range(2000))
    assert set(counts) <= {move for move, _ in listed}
    assert counts.most_common(1)[0][0] == listed[0][0]


def test_castling_is_returned_in_standard_notation(book: OpeningBook) -> None:
    board = board_after("e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6")
    assert chess.Move.from_uci("e1g1") in {move for move, _ in book.moves(board)}


def test_out_of_book_returns_none(book: OpeningBook) -> None:
    board = chess.Board(OUT_OF_BOOK_FEN)
    assert book.moves(board) == []
    assert book.choose(board) is None
    assert book.error is None


def test_bundled_book_is_sorted() -> None:
    rows = read_rows(default_book_path())
    assert rows
    for (key_a, _, weight_a, _), (key_b, _, weight_b, _) in zip(rows, rows[1:]):
        assert key_a <= key_b
        if key_a == key_b:
            assert weight_a >= weight_b


# Damaged or missing files.


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.bin"
    book = OpeningBook(path)
    assert book.error is not None
    assert str(path) in book.error
    assert book.choose(chess.Board()) is None
    assert book.moves(chess.Board()) == []


def test_directory_and_empty_file(tmp_path: Path) -> None:
    assert OpeningBook(tmp_path).error is not None
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    book = OpeningBook(empty)
    assert book.error is not None
    assert book.choose(chess.Board()) is None


def test_corrupt_size(tmp_path: Path) -> None:
    path = tmp_path / "odd.bin"
    path.write_bytes(random.Random(0).randbytes(17))
    book = OpeningBook(path)
    assert book.error is not None
    assert "corrupt" in book.error
    assert book.choose(chess.Board()) is None


def test_corrupt_garbage(tmp_path: Path) -> None:
    path = tmp_path / "garbage.bin"
    path.write_bytes(bytes(range(255, 223, -1)))  # 32 bytes, keys in descending order.
    book = OpeningBook(path)
    assert book.error is not None
    assert "corrupt" in book.error
    assert book.choose(chess.Board()) is None


def test_error_while_probing_disables_book(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    book = OpeningBook(write_book(tmp_path / "b.bin", [entry("", "e2e4", 1)]))
    assert book.error is None

    def broken(*args: object, **kwargs: object) -> None:
        raise struct.error("unpack requires a buffer of 16 bytes")

    monkeypatch.setattr(book._reader, "find_all", broken)
    assert book.choose(chess.Board()) is None
    assert book.error is not None and "corrupt" in book.error
    assert book.choose(chess.Board()) is None


# Weight handling on synthetic books.


def test_zero_weight_skipped_unless_all_zero(tmp_path: Path) -> None:
    path = write_book(tmp_path / "z.bin", [entry("", "e2e4", 0), entry("", "d2d4", 3), entry("e4", "e7e5", 0), entry("e4", "c7c5", 0)])
    with OpeningBook(path) as book:
        rng = random.Random(7)
        assert {book.choose(chess.Board(), rng) for _ in range(200)} == {chess.Move.from_uci("d2d4")}
        after_e4 = {book.choose(board_after("e4"), rng) for _ in range(200)}
        assert after_e4 == {chess.Move.from_uci("e7e5"), chess.Move.from_uci("c7c5")}


def test_illegal_entries_are_ignored(tmp_path: Path) -> None:
    path = write_book(tmp_path / "i.bin", [entry("", "e2e5", 100)])
    with OpeningBook(path) as book:
        assert book.moves(chess.Board()) == []
        assert book.choose(chess.Board()) is None


# Build tool.


SOURCE_ROWS = [
    entry("", "e2e4", 100, learn=7),
    entry("", "d2d4", 50),
    entry("", "a2a3", 1),  # 1/151 of the weight: below the 5 % share.
    entry("", "e2e5", 40),  # Illegal: ignored.
    entry("e4", "e7e5", 10),
    entry("e4", "c7c5", 8),
    entry("e4", "h7h5", 0),
    entry("d4", "d7d5", 5),
    entry("a3", "e7e5", 3),  # Only reachable through a pruned move.
    entry("e4 e5", "g1f3", 7),
    (0x1234, raw_move("e2e4"), 9, 0),  # Unreachable position.
]


def test_build_round_trip(tmp_path: Path) -> None:
    src = write_book(tmp_path / "src.bin", SOURCE_ROWS)
    dst = tmp_path / "out.bin"
    assert build_book(src, dst, plies=2, min_weight_share=0.05, max_moves=6) == (3, 5)
    expected = [
        entry("", "e2e4", 100, learn=7),
        entry("", "d2d4", 50),
        entry("e4", "e7e5", 10),
        entry("e4", "c7c5", 8),
        entry("d4", "d7d5", 5),
    ]
    assert read_rows(dst) == sorted(expected, key=lambda r: (r[0], -r[2]))
    with OpeningBook(dst) as book:
        assert book.error is None
        assert book.moves(board_after("e4")) == [(chess.Move.from_uci("e7e5"), 10), (chess.Move.from_uci("c7c5"), 8)]


def test_build_max_moves_and_plies(tmp_path: Path) -> None:
    src = write_book(tmp_path / "src.bin", SOURCE_ROWS)
    dst = tmp_path / "out.bin"
    assert build_book(src, dst, plies=3, min_weight_share=0.0, max_moves=1) == (3, 3)
    expected = [entry("", "e2e4", 100, learn=7), entry("e4", "e7e5", 10), entry("e4 e5", "g1f3", 7)]
    assert read_rows(dst) == sorted(expected)


def test_build_preserves_polyglot_castling(tmp_path: Path) -> None:
    line = "e4 e5 Nf3 Nc6 Bc4 Bc5".split()
    rows = [entry(" ".join(line[:i]), board_after(" ".join(line[:i])).parse_san(san).uci(), 1) for i, san in enumerate(line)]
    rows.append(entry(" ".join(line), "e1h1", 1))  # Polyglot encodes O-O as king takes rook.
    src = write_book(tmp_path / "src.bin", rows)
    dst = tmp_path / "out.bin"
    assert main([str(src), str(dst), "--plies", "20"]) == 0
    assert sorted(read_rows(dst)) == sorted(rows)
    with OpeningBook(dst) as book:
        assert book.choose(board_after(" ".join(line))) == chess.Move.from_uci("e1g1")


# Encodings.


def test_both_castling_encodings_of_one_move_are_summed(tmp_path: Path) -> None:
    """Polyglot writes O-O as e1h1; some books also hold e1g1.  They are one move, with one weight."""
    line = "e4 e5 Nf3 Nc6 Bc4 Bc5"
    path = write_book(tmp_path / "c.bin", [entry(line, "e1h1", 3), entry(line, "e1g1", 5), entry(line, "d2d3", 6)])
    castle, d3 = chess.Move.from_uci("e1g1"), chess.Move.from_uci("d2d3")
    with OpeningBook(path) as book:
        assert book.moves(board_after(line)) == [(castle, 8), (d3, 6)]
        rng = random.Random(3)
        counts = collections.Counter(book.choose(board_after(line), rng) for _ in range(1400))
    assert set(counts) == {castle, d3}
    assert 750 < counts[castle] < 850  # 8/14 of 1400 is 800


@pytest.mark.parametrize("raw, why", [
    (raw_move("e2e4") | 1 << 15, "bit 15 set"),
    (raw_move("e7e8q") + (1 << 12), "promotion piece 5"),
    (raw_move("e2e4") | 7 << 12, "promotion piece 7"),
])
def test_an_invalid_move_encoding_is_refused(tmp_path: Path, raw: int, why: str) -> None:
    key = chess.polyglot.zobrist_hash(chess.Board())
    path = write_book(tmp_path / "bad.bin", [(key, raw_move("d2d4"), 1, 0), (key, raw, 1, 0)])
    book = OpeningBook(path)
    assert book.error is not None and "invalid move encoding" in book.error, why
    assert book.choose(chess.Board()) is None
    assert book.moves(chess.Board()) == []


def test_every_valid_promotion_encoding_is_accepted(tmp_path: Path) -> None:
    board = chess.Board("4k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    rows = [(chess.polyglot.zobrist_hash(board), raw_move(f"a7a8{piece}"), 1, 0) for piece in "nbrq"]
    with OpeningBook(write_book(tmp_path / "promotions.bin", rows)) as book:
        assert book.error is None
        assert {move.uci() for move, _ in book.moves(board)} == {"a7a8n", "a7a8b", "a7a8r", "a7a8q"}


@pytest.mark.parametrize("make_source, problem", [
    (lambda folder: folder, "not a file"),
    (lambda folder: _written(folder / "empty.bin", b""), "empty"),
    (lambda folder: _written(folder / "text.bin", b"1. e4 e5 2. Nf3 *\n" * 3), "corrupt"),
    (lambda folder: write_book(folder / "other.bin", [entry("e4", "e7e5", 1)]), "no book move from the start"),
])
def test_build_refuses_a_useless_source_and_keeps_the_old_book(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               make_source, problem: str) -> None:
    """A directory, an empty or garbage file, a book without the start position: status 1, the output untouched."""
    out = write_book(tmp_path / "out.bin", [entry("", "e2e4", 1)])
    before = out.read_bytes()
    assert main([str(make_source(tmp_path)), str(out)]) == 1
    assert problem in capsys.readouterr().err
    assert out.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith(".out.bin")) == []


@pytest.mark.parametrize("option", [["--plies", "0"], ["--max-moves", "-1"], ["--min-weight-share", "2"],
                                    ["--min-weight-share", "nan"], ["--min-weight-share", "-1"]])
def test_build_options_out_of_range_are_usage_errors(tmp_path: Path, option: list[str]) -> None:
    src = write_book(tmp_path / "src.bin", [entry("", "e2e4", 1)])
    with pytest.raises(SystemExit) as exit_info:
        main([str(src), str(tmp_path / "out.bin"), *option])
    assert exit_info.value.code == 2 and not (tmp_path / "out.bin").exists()


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
