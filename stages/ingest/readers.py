"""Raw record readers for every input format: each yields raw records or counted bad records.

A reader never raises on a bad record; it raises UnreadableFileError, naming the file, only
when the file as a whole cannot be read (a truncated archive, a broken Parquet footer).
"""

from __future__ import annotations

import gzip
import json
import unicodedata
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import charset_normalizer
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from common.errors import UnreadableFileError

READ_BLOCK = 1 << 20


# .txt files that are not UTF-8: the encodings charset-normalizer may choose from (GB18030 covers GBK and
# GB2312; a BOM decides UTF-16 and UTF-32)
TEXT_ENCODINGS = ("gb18030", "big5", "utf_16", "utf_32", "cp1252")
# without a BOM UTF-16/32 decode almost any even-length bytes, so only these are tried by strict decoding
LEGACY_BYTE_ENCODINGS = ("gb18030", "big5", "cp1252")
PLAUSIBLE_SHARE = 0.9


@dataclass(frozen=True)
class RawRecord:
    """A decoded input record (a JSON object, a Parquet row, or a text file) and where it came from;
    ``encoding`` is the one a text file was transcoded from, None for UTF-8."""

    fields: dict
    location: str
    encoding: str | None = None


@dataclass(frozen=True)
class BadRecord:
    """An input record that could not be decoded; ``raw`` is kept for the exclusion file."""

    reason: str
    raw: str
    detail: str
    location: str


Item = RawRecord | BadRecord


def _decode_json_line(line: bytes, location: str) -> Item:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as err:
        return BadRecord("bad_utf8", line.decode("utf-8", errors="replace"), f"invalid UTF-8 at byte {err.start}", location)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        return BadRecord("bad_json", text, f"{err.msg} at column {err.colno}", location)
    if not isinstance(value, dict):
        return BadRecord("bad_json", text, f"a JSON {type(value).__name__}, not an object", location)
    return RawRecord(value, location)


def _zstd_chunks(handle, name: str) -> Iterator[bytes]:
    """Decompress every zstd frame in ``handle``; a stream that ends inside a frame is an error."""
    decompressor = zstandard.ZstdDecompressor().decompressobj()
    in_frame = False
    while block := handle.read(READ_BLOCK):
        while block:
            in_frame = True
            out = decompressor.decompress(block)
            if out:
                yield out
            if decompressor.eof:
                block = decompressor.unused_data
                decompressor = zstandard.ZstdDecompressor().decompressobj()
                in_frame = False
            else:
                block = b""
    if in_frame:
        raise UnreadableFileError(f"{name}: truncated zstd stream (the file ends inside a frame)")


def _lines_from_chunks(chunks: Iterator[bytes]) -> Iterator[bytes]:
    pending = b""
    for chunk in chunks:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        yield from lines
    if pending:
        yield pending


def _compressed_lines(path: Path, fmt: str, name: str) -> Iterator[bytes]:
    try:
        with open(path, "rb") as handle:
            if fmt == "jsonl_gz":
                with gzip.GzipFile(fileobj=handle, mode="rb") as stream:
                    for line in stream:
                        yield line.rstrip(b"\n")
            else:
                yield from _lines_from_chunks(_zstd_chunks(handle, name))
    except UnreadableFileError:
        raise
    except (OSError, EOFError, zlib.error, zstandard.ZstdError) as err:
        raise UnreadableFileError(f"{name}: cannot be decompressed ({err})") from None


def _plain_lines(path: Path, start: int, end: int) -> Iterator[bytes]:
    """The lines that begin at a byte offset in [start, end)."""
    with open(path, "rb") as handle:
        handle.seek(start)
        position = start
        while position < end:
            line = handle.readline()
            if not line:
                break
            position += len(line)
            yield line.rstrip(b"\n")


def read_jsonl(spec: dict, path: Path) -> Iterator[Item]:
    """Records of a JSONL unit (plain byte range, or a whole .gz / .zst file)."""
    name = spec["name"]
    if spec["format"] == "jsonl":
        lines = _plain_lines(path, spec["start"], spec["end"])
    else:
        lines = _compressed_lines(path, spec["format"], name)
    for number, line in enumerate(lines, start=spec.get("first_line", 1)):
        if number == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        if not line.strip():
            continue  # a blank line is not a record
        yield _decode_json_line(line, f"{name}:{number}")


def read_parquet(spec: dict, path: Path) -> Iterator[Item]:
    """Rows of the unit's Parquet row groups, as dicts."""
    name = spec["name"]
    try:
        parquet = pq.ParquetFile(path)
        row = spec["first_row"]
        for batch in parquet.iter_batches(row_groups=spec["row_groups"], batch_size=4096):
            for fields in batch.to_pylist():
                yield RawRecord(fields, f"{name}:row {row}")
                row += 1
    except (OSError, pa.ArrowException) as err:
        raise UnreadableFileError(f"{name}: unreadable Parquet file ({err})") from None


def plausible_share(text: str) -> float:
    """Share of a decoding's non-ASCII characters that running text is made of: letters and the punctuation
    of the General Punctuation, CJK Symbols and Punctuation and fullwidth blocks, except a Han character
    wedged between two ASCII letters. A wrong decoding of mostly-ASCII text turns each two-byte character
    into symbols ('¡±' for a GBK curly quote read as cp1252) or a Han character inside a word (a GBK 'é'
    read as Big5)."""
    wide = 0
    fits = 0
    for i, c in enumerate(text):
        if ord(c) <= 0x7F or c == "\ufeff":
            continue
        wide += 1
        if "\u2000" <= c <= "\u206f" or "\u3000" <= c <= "\u303f" or "\uff00" <= c <= "\uffef":
            fits += 1
        elif unicodedata.category(c).startswith("L"):
            inside_word = 0 < i < len(text) - 1 and _ascii_letter(text[i - 1]) and _ascii_letter(text[i + 1])
            fits += not (inside_word and unicodedata.name(c, "").startswith("CJK"))
    return fits / wide if wide else 1.0


def _ascii_letter(c: str) -> bool:
    return c.isascii() and c.isalpha()


def transcode(data: bytes) -> tuple[str, str] | None:
    """The text of bytes that are not UTF-8 and the encoding they are in among TEXT_ENCODINGS, or None when
    none fits: of charset-normalizer's candidates the most plausible (:func:`plausible_share`), ties in its
    order (its own first choice takes mostly-English GBK text with curly quotes for cp1252 or Big5); when it
    offers none (ASCII-heavy Chinese, such as technical text), the first single- or double-byte encoding
    that decodes strictly to plausible text (at least PLAUSIBLE_SHARE)."""
    matches = list(charset_normalizer.from_bytes(data, cp_isolation=list(TEXT_ENCODINGS)))
    candidates = [(str(match), match.encoding) for match in matches]
    if not candidates:
        for encoding in LEGACY_BYTE_ENCODINGS:
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                continue
            if plausible_share(text) >= PLAUSIBLE_SHARE:
                candidates.append((text, encoding))
                break
    if not candidates:
        return None
    best = max(range(len(candidates)), key=lambda i: (plausible_share(candidates[i][0]), -i))
    text, encoding = candidates[best]
    return text.removeprefix("\ufeff"), encoding


def read_text_files(spec: dict, root: Path) -> Iterator[Item]:
    """One record per .txt file: the whole file is the text (UTF-8 with or without a BOM, else transcoded
    from the encoding :func:`transcode` finds), its relative path the id."""
    for rel in spec["files"]:
        location = f"{spec['name']}/{rel}"
        try:
            data = (root / rel).read_bytes()
        except OSError as err:
            raise UnreadableFileError(f"{location}: cannot be read ({err})") from None
        try:
            text, encoding = data.decode("utf-8").removeprefix("\ufeff"), None
        except UnicodeDecodeError as err:
            if (found := transcode(data)) is None:
                yield BadRecord("bad_utf8", data.decode("utf-8", errors="replace"),
                                f"invalid UTF-8 at byte {err.start}, and not {' or '.join(TEXT_ENCODINGS)}", location)
                continue
            text, encoding = found
        yield RawRecord({"text": text, "id": rel}, location, encoding)


def read_unit(spec: dict) -> Iterator[Item]:
    """Every raw record of one work unit, in a deterministic order."""
    path = Path(spec["path"])
    if spec["format"] == "txt":
        return read_text_files(spec, path)
    if spec["format"] == "parquet":
        return read_parquet(spec, path)
    return read_jsonl(spec, path)
