"""Packed token streams as the trainer reads them: a flat uint16 ``.bin``, its ``.idx`` and ``meta.json``.

Only numpy and the standard library are imported here: the trainer's environment has no pyarrow,
and reading tokens needs none of the data stages' libraries. The tokenize stage writes, per split,
``<split>.bin`` (every document's tokens, each ending with EOS, in the shuffled order), ``<split>.idx``
(int64 start offsets of the documents, plus the total: documents + 1 entries) and one ``meta.json``
for all splits.
Training samples are windows of ``seq_len + 1`` tokens with stride ``seq_len`` (Megatron style):
window ``i`` covers tokens ``[i * seq_len, i * seq_len + seq_len]`` inclusive.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from common.errors import KilnError
from common.files import file_sha256, sampled_blocks, sampled_sha256
from common.pipeline import MANIFEST_NAME

TOKEN_DTYPE = "uint16"
MAX_VOCAB = 1 << 16
META_NAME = "meta.json"
META_FORMAT = "kiln-tokens/1"
# verify="auto" hashes a split whole up to this size, and samples blocks above it
FULL_VERIFY_MAX_BYTES = 4 << 30
VerifyMode = Literal["auto", "full", "sampled"]


class TokenFileError(KilnError):
    """A packed token file is missing or disagrees with its metadata."""


def _require_file(path: Path, what: str) -> None:
    if not path.is_file():
        raise TokenFileError(f"{path}: {what} not found")


def read_meta(meta_path: Path) -> dict:
    """Parse and check ``meta.json``: the format, the dtype and a vocabulary that fits uint16."""
    meta_path = Path(meta_path)
    _require_file(meta_path, "token metadata")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise TokenFileError(f"{meta_path}: not valid JSON ({err})") from None
    if not isinstance(meta, dict) or meta.get("format") != META_FORMAT:
        raise TokenFileError(f"{meta_path}: not a Kiln token metadata file (expected format {META_FORMAT!r})")
    if meta.get("dtype") != TOKEN_DTYPE:
        raise TokenFileError(f"{meta_path}: dtype {meta.get('dtype')!r} is not supported (expected {TOKEN_DTYPE!r})")
    vocab = meta.get("vocab_size")
    if not isinstance(vocab, int) or not 0 < vocab <= MAX_VOCAB:
        raise TokenFileError(f"{meta_path}: vocab_size {vocab!r} does not fit {TOKEN_DTYPE} (at most {MAX_VOCAB})")
    if not isinstance(meta.get("eos_id"), int) or not 0 <= meta["eos_id"] < vocab:
        raise TokenFileError(f"{meta_path}: eos_id {meta.get('eos_id')!r} is not an id below vocab_size {vocab}")
    if not isinstance(meta.get("splits"), dict):
        raise TokenFileError(f"{meta_path}: no 'splits' table")
    return meta


def _positive_int(value: object, what: str, where: Path) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise TokenFileError(f"{where}: {what} must be a positive integer, got {value!r}")
    return value


class TokenDataset:
    """Random access to the windows of one packed split, memory-mapped (nothing is read up front).

    ``idx_path`` defaults to the ``.bin`` with the suffix ``.idx``, ``meta_path`` to ``meta.json``
    beside it, and ``seq_len`` to the one recorded in the metadata. A split packed as several
    streams (meta.json lists ``streams``; the tokenize stage writes them when a split exceeds
    ``tokenize.stream_max_documents``) is opened by its plain name, ``<split>.bin``, and read as the
    concatenation of its streams in the listed order: windows run across the seams.
    """

    def __init__(self, bin_path: str | Path, idx_path: str | Path | None = None,
                 meta_path: str | Path | None = None, seq_len: int | None = None):
        self.bin_path = Path(bin_path)
        self.idx_path = Path(idx_path) if idx_path is not None else self.bin_path.with_suffix(".idx")
        self.meta_path = Path(meta_path) if meta_path is not None else self.bin_path.parent / META_NAME
        self.meta = read_meta(self.meta_path)
        self.split = self._split_entry()
        self.vocab_size: int = self.meta["vocab_size"]
        self.eos_id: int = self.meta["eos_id"]
        self.pad_id: int | None = self.meta.get("pad_id")
        chosen = self.meta.get("seq_len") if seq_len is None else seq_len
        self.seq_len = _positive_int(chosen, "seq_len", self.meta_path if seq_len is None else self.bin_path)
        streams = self.split.get("streams")
        if streams is None:
            parts = [(self.bin_path, self.idx_path, self.split.get("tokens"), self.split.get("documents"))]
        else:
            folder = self.bin_path.parent
            parts = [(folder / str(s.get("bin")), folder / str(s.get("idx")), s.get("tokens"), s.get("documents"))
                     for s in streams]
        self._files = [(bin_file, idx_file) for bin_file, idx_file, _, _ in parts]
        self._streams = [self._open(*part) for part in parts]
        self._starts = np.cumsum([0] + [len(tokens) for tokens, _ in self._streams])
        self.n_tokens = int(self._starts[-1])
        self.n_docs = sum(len(offsets) - 1 for _, offsets in self._streams)
        self.tokens = self._streams[0][0] if len(self._streams) == 1 else None
        """The one stream's tokens (memory-mapped), or None for a split of several streams (use :meth:`read`)."""
        self._boundaries: np.ndarray | None = None

    def _split_entry(self) -> dict:
        for name, entry in self.meta["splits"].items():
            if entry.get("bin") == self.bin_path.name or ("streams" in entry and self.bin_path.name == f"{name}.bin"):
                return entry
        known = sorted(str(e.get("bin", f"{n}.bin")) for n, e in self.meta["splits"].items())
        raise TokenFileError(f"{self.meta_path}: describes no split stored in {self.bin_path.name!r} (it lists {known})")

    def _open(self, bin_path: Path, idx_path: Path, tokens: object, docs: object) -> tuple[np.ndarray, np.ndarray]:
        """One stream's tokens and offsets, memory-mapped, after checking their sizes against meta.json."""
        _require_file(bin_path, "token stream")
        _require_file(idx_path, "document index")
        size = bin_path.stat().st_size
        if size % 2 or not isinstance(tokens, int) or size // 2 != tokens:
            raise TokenFileError(
                f"{bin_path}: {size} bytes, but {self.meta_path.name} records {tokens} {TOKEN_DTYPE} "
                f"tokens ({tokens * 2 if isinstance(tokens, int) else '?'} bytes); the file is truncated, "
                "or from another run"
            )
        size = idx_path.stat().st_size
        if size % 8 or not isinstance(docs, int) or size // 8 != docs + 1:
            raise TokenFileError(
                f"{idx_path}: {size} bytes, but {self.meta_path.name} records {docs} documents "
                f"(expected {(docs + 1) * 8 if isinstance(docs, int) else '?'} bytes of int64 offsets)"
            )
        offsets = self._map(idx_path, np.int64, docs + 1)
        if int(offsets[0]) != 0 or int(offsets[-1]) != tokens:
            raise TokenFileError(f"{idx_path}: offsets must run from 0 to {tokens} tokens")
        return self._map(bin_path, np.uint16, tokens), offsets

    @staticmethod
    def _map(path: Path, dtype: type, count: int) -> np.ndarray:
        if count == 0:
            return np.zeros(0, dtype=dtype)
        return np.memmap(path, dtype=dtype, mode="r", shape=(count,))

    def read(self, start: int, stop: int) -> np.ndarray:
        """Tokens ``[start, stop)`` of the split's stream, as uint16 (across the seams between streams)."""
        if self.tokens is not None:
            return np.array(self.tokens[start:stop])
        first = int(np.searchsorted(self._starts, start, side="right")) - 1
        pieces = []
        while start < stop:
            tokens, _ = self._streams[first]
            begin = start - int(self._starts[first])
            piece = tokens[begin:begin + stop - start]
            pieces.append(piece)
            start += len(piece)
            first += 1
        return np.concatenate(pieces) if pieces else np.zeros(0, np.uint16)

    def verify(self, mode: VerifyMode = "auto") -> str:
        """Check the split's files against the checksums meta.json records (and meta.json against the
        tokenize manifest beside it), and every token id checked against ``vocab_size``; return a line
        saying what was checked, or raise TokenFileError naming the file.

        ``full`` hashes every byte and checks every id; ``sampled`` checks the size (always checked on
        open), the sha256 of 16 evenly spaced 64 KiB blocks and the ids in them; ``auto`` is ``full``
        for splits up to FULL_VERIFY_MAX_BYTES and ``sampled`` above. :meth:`batch` checks the ids of
        every window it reads in any mode."""
        self._verify_meta_against_manifest()
        total = sum(path.stat().st_size for pair in self._files for path in pair)
        chosen = mode if mode != "auto" else ("full" if total <= FULL_VERIFY_MAX_BYTES else "sampled")
        recorded = self.split.get("checksums")
        for stream, (bin_path, idx_path) in enumerate(self._files):
            tokens = self._streams[stream][0]
            if chosen == "full":
                sums = {bin_path.name: self._hash_and_check_ids(bin_path, tokens), idx_path.name: file_sha256(idx_path)}
            else:
                self._check_ids(bin_path, tokens, sampled_blocks(tokens.size * 2))
                sums = {path.name: sampled_sha256(path) for path in (bin_path, idx_path)}
            if recorded is None:
                continue
            key = "sha256" if chosen == "full" else "sampled_sha256"
            for name, digest in sums.items():
                expected = recorded.get(name, {}).get(key)
                if expected != digest:
                    raise TokenFileError(
                        f"{self.bin_path.parent / name}: its {key} is not the one {self.meta_path.name} records: the "
                        "file changed after the tokenize stage wrote it (flipped bytes, a partial copy, or a file "
                        "from another run); rerun tokenize or copy the token folder again")
        size = f"{total / 1e9:.2f} GB" if total >= 1e8 else f"{total / 1e6:.1f} MB"
        if recorded is None:
            return (f"{self.bin_path}: ids below vocab_size {self.vocab_size} ({chosen} check of {size}); "
                    f"{self.meta_path.name} records no checksums, so the content was not verified")
        how = "every byte hashed" if chosen == "full" else "size and 16 sampled blocks"
        return f"{self.bin_path}: {size} verified ({how}, ids below vocab_size {self.vocab_size})"

    def _verify_meta_against_manifest(self) -> None:
        manifest_path = self.meta_path.parent / MANIFEST_NAME
        if not manifest_path.is_file():
            return
        try:
            entries = json.loads(manifest_path.read_text(encoding="utf-8"))["outputs"]["meta"]
        except (ValueError, KeyError, TypeError):
            raise TokenFileError(f"{manifest_path}: not a tokenize manifest listing {META_NAME}") from None
        expected = next((e.get("sha256") for e in entries if e.get("path") == self.meta_path.name), None)
        if expected is not None and expected != file_sha256(self.meta_path):
            raise TokenFileError(f"{self.meta_path}: changed after the tokenize stage wrote it (its sha256 is not "
                                 f"the one {manifest_path.name} records); rerun tokenize")

    def _hash_and_check_ids(self, bin_path: Path, tokens: np.ndarray, chunk: int = 8 << 20) -> str:
        """sha256 of a stream's bytes, checking every id in the same pass."""
        digest = hashlib.sha256()
        for start in range(0, tokens.size, chunk):
            block = np.asarray(tokens[start:start + chunk])
            self._require_ids(bin_path, block, start)
            digest.update(block.tobytes())
        return digest.hexdigest()

    def _check_ids(self, bin_path: Path, tokens: np.ndarray, blocks: list[tuple[int, int]]) -> None:
        for offset, length in blocks:
            start = offset // 2
            self._require_ids(bin_path, np.asarray(tokens[start:start + -(-length // 2)]), start)

    def _require_ids(self, bin_path: Path, block: np.ndarray, start: int) -> None:
        if block.size and int(block.max()) >= self.vocab_size:
            where = start + int(np.argmax(block >= self.vocab_size))
            raise TokenFileError(f"{bin_path}: token {where} has id {int(block[where - start])}, not below the "
                                 f"vocab_size {self.vocab_size} that {self.meta_path} records: the tokens and "
                                 "meta.json are from different runs, or one of them was edited")

    def __len__(self) -> int:
        """Windows of seq_len + 1 tokens with stride seq_len (the last token of one is the first of the next)."""
        return max(self.n_tokens - 1, 0) // self.seq_len

    def window(self, i: int) -> np.ndarray:
        """Tokens ``[i * seq_len, (i + 1) * seq_len]``: seq_len + 1 of them, as uint16."""
        if not 0 <= i < len(self):
            raise IndexError(f"window {i} out of range: {self.bin_path} holds {len(self)} windows of {self.seq_len} + 1")
        start = i * self.seq_len
        return self.read(start, start + self.seq_len + 1)

    def batch(self, indices: Sequence[int] | np.ndarray, dtype: type = np.int32) -> tuple[np.ndarray, np.ndarray]:
        """(inputs, labels) of the given windows, each of shape (len(indices), seq_len) in ``dtype``
        (int32 or int64); labels are the inputs shifted by one token."""
        if np.dtype(dtype) not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise ValueError(f"dtype must be int32 or int64, got {np.dtype(dtype)}")
        index = np.asarray(indices, dtype=np.int64).reshape(-1)
        if index.size and (index.min() < 0 or index.max() >= len(self)):
            raise IndexError(f"window indices must lie in [0, {len(self)}) for {self.bin_path}")
        windows = np.empty((index.size, self.seq_len + 1), dtype=np.uint16)
        for row, i in enumerate(index.tolist()):
            start = i * self.seq_len
            windows[row] = self.read(start, start + self.seq_len + 1)
        if windows.size and int(windows.max()) >= self.vocab_size:  # one check per batch; the row only to name it
            row = int(np.argmax((windows >= self.vocab_size).any(axis=1)))
            self._require_ids(self.bin_path, windows[row], int(index[row]) * self.seq_len)
        return windows[:, :-1].astype(dtype), windows[:, 1:].astype(dtype)

    def doc_boundaries(self) -> np.ndarray:
        """Start offsets of the documents in the stream plus the total (int64, documents + 1 entries)."""
        if self._boundaries is None:
            pieces = [offsets[:-1] + int(start) for (_, offsets), start in zip(self._streams, self._starts, strict=False)]
            boundaries = np.concatenate([*pieces, [self.n_tokens]]).astype(np.int64)
            if boundaries.size > 1 and np.any(boundaries[1:] <= boundaries[:-1]):
                raise TokenFileError(f"{self.idx_path}: offsets are not strictly increasing")
            self._boundaries = boundaries
        return self._boundaries
