"""Chunk files and the shards that bundle them: where labelled positions live on disk.

A *chunk* is one generator task's records under a name such as ``play-0042``.
It is stored in one of two formats, told apart by the file name's suffix and
then the magic (`training.records` defines the 32-byte record both decode to):

* version 2, ``<chunk>.psd.xz`` (`training.packed`): what `write_chunk` writes;
  positions stored as the moves between them, about 4.6 bytes a position;
* version 1, ``<chunk>.psd.gz``: a 16-byte header and the 32-byte records,
  gzip-compressed (about 13 bytes a record).  Still read, so that data made
  before version 2 loads until `training.convert` turns it into version 2.

The generator writes each chunk as a file of its own ("loose"), which is what
makes it resumable.  Tens of thousands of small files do not suit a git
repository, so `pack` gathers loose chunks into *shards* of a few MB: a shard
(``<first chunk>--<last chunk>.shard``) is an index followed by the chunk files'
bytes, unchanged, so every chunk reads back byte for byte as the file it was::

    magic    4 bytes b"PSHD"
    version  u16 (1)
    count    u32, the number of chunks
    count x  (name length u8, the chunk's file name, its byte length u32)
    the chunk files' bytes, in index order

`list_chunks` lists a folder's chunks, loose and in shards alike, as `Chunk`
references; every reader (the trainer, `training.verify`, the held-out split)
works on those, so a chunk is the same whether it is loose or packed.

    python -m training.chunks pack data/nnue     # gather the loose chunks into new shards
    python -m training.chunks digest data/nnue   # record count and sha256 of every record, in name order
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import lzma
import struct
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from training.packed import pack as pack_body
from training.packed import unpack as unpack_body
from training.records import HEADER_V1, MAGIC_V1, RECORD_SIZE, VERSION_V1, DataFormatError, Record, decode, encode

#: A chunk file's suffixes: version 2 (written) and version 1 (read only).
SUFFIX, SUFFIX_V1 = ".psd.xz", ".psd.gz"
SHARD_SUFFIX = ".shard"
SHARD_MAGIC = b"PSHD"
SHARD_VERSION = 1
SHARD_HEADER = struct.Struct("<4sHI")
SHARD_ENTRY = struct.Struct("<I")
#: `pack` starts a new shard once one holds this many bytes.
SHARD_BYTES = 4_000_000


@dataclass(frozen=True)
class Chunk:
    """Where one chunk's file bytes are: a loose file, or a slice of a shard."""

    #: The chunk's file name, e.g. ``play-0042.psd.xz`` (its suffix says its format).
    file_name: str
    #: The loose file, or the shard that holds it.
    source: Path
    #: Where its bytes start in the shard; -1 for a loose file.
    offset: int = -1
    length: int = 0

    @property
    def name(self) -> str:
        """The chunk's name, e.g. ``play-0042``, whichever version its file is."""
        return chunk_name(self.file_name)

    @property
    def loose(self) -> bool:
        return self.offset < 0

    def read_bytes(self) -> bytes:
        """The chunk file's bytes, as the generator wrote them."""
        if self.loose:
            return self.source.read_bytes()
        with open(self.source, "rb") as shard:
            shard.seek(self.offset)
            data = shard.read(self.length)
        if len(data) != self.length:
            raise DataFormatError(f"{self}: the shard ends inside this chunk")
        return data

    def __str__(self) -> str:
        return str(self.source) if self.loose else f"{self.source}:{self.file_name}"


def chunk_name(chunk: Chunk | Path | str) -> str:
    """The chunk's name, e.g. ``play-0042``, from a `Chunk`, a path or a file name."""
    if isinstance(chunk, Chunk):
        return chunk.name
    name = Path(chunk).name
    for suffix in (SUFFIX, SUFFIX_V1):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def _as_chunk(chunk: Chunk | Path) -> Chunk:
    return chunk if isinstance(chunk, Chunk) else Chunk(Path(chunk).name, Path(chunk))


# --- shards -------------------------------------------------------------------------

def read_shard_index(path: Path) -> list[Chunk]:
    """The chunks a shard holds, in its order (only the index is read)."""
    with open(path, "rb") as shard:
        head = shard.read(SHARD_HEADER.size)
        if len(head) < SHARD_HEADER.size:
            raise DataFormatError(f"{path}: truncated shard header")
        magic, version, count = SHARD_HEADER.unpack(head)
        if magic != SHARD_MAGIC or version != SHARD_VERSION:
            raise DataFormatError(f"{path}: not a version {SHARD_VERSION} shard (magic {magic!r}, version {version})")
        entries = []
        for _ in range(count):
            size = shard.read(1)
            name = shard.read(size[0]) if size else b""
            length = shard.read(SHARD_ENTRY.size)
            if not size or len(name) != size[0] or len(length) != SHARD_ENTRY.size:
                raise DataFormatError(f"{path}: truncated shard index")
            entries.append((name.decode(), SHARD_ENTRY.unpack(length)[0]))
        offset = shard.tell()
    chunks = []
    for file_name, length in entries:
        chunks.append(Chunk(file_name, Path(path), offset, length))
        offset += length
    if offset != Path(path).stat().st_size:
        raise DataFormatError(f"{path}: the index says {offset} bytes, the shard has {Path(path).stat().st_size}")
    return chunks


def write_shard(path: Path, chunks: Iterable[Chunk]) -> int:
    """Write the chunks' bytes, unchanged, into one shard at `path` (atomically); returns the count."""
    index = bytearray()
    bodies = []
    for chunk in chunks:
        name = chunk.file_name.encode()
        data = chunk.read_bytes()
        index += bytes([len(name)]) + name + SHARD_ENTRY.pack(len(data))
        bodies.append(data)
    write_atomically(Path(path), SHARD_HEADER.pack(SHARD_MAGIC, SHARD_VERSION, len(bodies)) + bytes(index)
                     + b"".join(bodies))
    return len(bodies)


def shard_name(chunks: list[Chunk]) -> str:
    return f"{chunks[0].name}--{chunks[-1].name}{SHARD_SUFFIX}"


def pack(directory: Path, shard_bytes: int = SHARD_BYTES) -> list[Path]:
    """Gather the folder's loose chunks into new shards (one kind per shard, in name order); returns them.

    Existing shards are left as they are, so that a data commit adds files
    and never rewrites one.  A loose chunk whose name a shard already holds
    is not packed again (`training.verify` reports such duplicates).
    """
    directory = Path(directory)
    packed = {chunk.name for shard in directory.glob("*" + SHARD_SUFFIX) for chunk in read_shard_index(shard)}
    loose = [chunk for chunk in list_chunks(directory) if chunk.loose and chunk.name not in packed]
    groups: list[list[Chunk]] = []
    size = 0
    for chunk in loose:
        kind = chunk.name.split("-")[0]
        length = chunk.source.stat().st_size
        if not groups or size + length > shard_bytes or groups[-1][0].name.split("-")[0] != kind:
            groups.append([])
            size = 0
        groups[-1].append(chunk)
        size += length
    written = []
    for group in groups:
        path = directory / shard_name(group)
        write_shard(path, group)
        if [chunk.read_bytes() for chunk in read_shard_index(path)] != [chunk.read_bytes() for chunk in group]:
            raise DataFormatError(f"{path}: does not read back as the files it was made from")
        for chunk in group:
            chunk.source.unlink()
        written.append(path)
    return written


# --- listing ------------------------------------------------------------------------

def list_chunks(directory: Path) -> list[Chunk]:
    """Every chunk of a folder, loose or in a shard (either version), in the order of their names."""
    directory = Path(directory)
    found = [Chunk(path.name, path) for suffix in (SUFFIX, SUFFIX_V1) for path in directory.glob("*" + suffix)]
    for shard in directory.glob("*" + SHARD_SUFFIX):
        found.extend(read_shard_index(shard))
    return sorted(found, key=lambda chunk: (chunk.name, chunk.file_name, str(chunk.source)))


def chunk_names(directory: Path) -> set[str]:
    """The names of every chunk a folder holds, loose or packed (the generator's "already made")."""
    return {chunk.name for chunk in list_chunks(directory)}


# --- one chunk's records --------------------------------------------------------------

def write_chunk(path: Path, records: Iterable[Record]) -> int:
    """Write records to `path` atomically (a temporary name, then rename); returns the count.

    A ``.psd.xz`` path gets version 2, anything else version 1 (kept for
    the tests of the version 1 reader).
    """
    body = b"".join(encode(record) for record in records)
    path = Path(path)
    if path.name.endswith(SUFFIX):
        write_atomically(path, pack_body(body))
        return len(body) // RECORD_SIZE
    count = len(body) // RECORD_SIZE
    header = HEADER_V1.pack(MAGIC_V1, VERSION_V1, RECORD_SIZE, count, zlib.crc32(body))
    # mtime=0 (and gzip's stored name, the temporary one): the same records
    # under the same name give the same bytes, whenever they are written.
    write_atomically(path, gzip.compress(header + body, 9, mtime=0))
    return count


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` under a temporary name, then rename: a reader never sees half a file."""
    partial = path.with_name(path.name + ".part")
    partial.write_bytes(data)
    partial.replace(path)


def read_raw(chunk: Chunk | Path) -> bytes:
    """The validated record bytes of a chunk of either version (header and CRC checked)."""
    chunk = _as_chunk(chunk)
    name = str(chunk)
    xz = chunk.file_name.endswith(SUFFIX)
    try:
        compressed = chunk.read_bytes()
        data = lzma.decompress(compressed) if xz else gzip.decompress(compressed)
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as error:
        raise DataFormatError(f"{name}: cannot decompress ({error})") from None
    return unpack_body(data, name) if xz else _unpack_v1(data, name)


def _unpack_v1(data: bytes, name: str) -> bytes:
    if len(data) < HEADER_V1.size:
        raise DataFormatError(f"{name}: truncated header at offset 0 ({len(data)} bytes)")
    magic, version, size, count, crc = HEADER_V1.unpack_from(data)
    if magic != MAGIC_V1:
        raise DataFormatError(f"{name}: bad magic {magic!r} at offset 0")
    if version != VERSION_V1 or size != RECORD_SIZE:
        raise DataFormatError(f"{name}: unsupported version {version} / record size {size} at offset 4")
    body = data[HEADER_V1.size:]
    if len(body) != count * RECORD_SIZE:
        whole = len(body) // RECORD_SIZE
        raise DataFormatError(
            f"{name}: truncated at offset {HEADER_V1.size + whole * RECORD_SIZE}: header promises {count} records, "
            f"the file holds {len(body) / RECORD_SIZE:.2f}")
    if zlib.crc32(body) != crc:
        raise DataFormatError(f"{name}: checksum mismatch over the records at offset {HEADER_V1.size}")
    return body


def read_chunk(chunk: Chunk | Path) -> list[Record]:
    """Every record of a chunk, each validated."""
    body = read_raw(chunk)
    return [decode(body, offset, str(chunk), HEADER_V1.size) for offset in range(0, len(body), RECORD_SIZE)]


# --- command line -------------------------------------------------------------------

def digest(chunks: Iterable[Chunk]) -> tuple[int, int, str]:
    """(chunks, records, sha256 of every chunk's name and record bytes in order): equal for two layouts of the same data."""
    sha = hashlib.sha256()
    count = records = 0
    for chunk in chunks:
        body = read_raw(chunk)
        sha.update(chunk.name.encode() + b"\0" + len(body).to_bytes(8, "little") + body)
        count += 1
        records += len(body) // RECORD_SIZE
    return count, records, sha.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["pack", "digest"])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--shard-bytes", type=int, default=SHARD_BYTES, help="start a new shard past this size")
    args = parser.parse_args(argv)
    if not args.directory.is_dir():
        parser.error(f"{args.directory}: no such folder")
    try:
        if args.command == "pack":
            shards = pack(args.directory, args.shard_bytes)
            print(f"{len(shards)} shards written in {args.directory}")
        else:
            count, records, sha = digest(list_chunks(args.directory))
            print(f"{count} chunks, {records} records, sha256 {sha}")
    except DataFormatError as error:
        print(f"chunks: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
