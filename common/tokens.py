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

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from common.errors import KilnError

TOKEN_DTYPE = "uint16"
MAX_VOCAB = 1 << 16
META_NAME = "meta.json"
META_FORMAT = "kiln-tokens/1"


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
    beside it, and ``seq_len`` to the one recorded in the metadata.
    """

    def __init__(self, bin_path: str | Path, idx_path: str | Path | None = None,
                 meta_path: str | Path | None = None, seq_len: int | None = None):
        self.bin_path = Path(bin_path)
        self.idx_path = Path(idx_path) if idx_path is not None else self.bin_path.with_suffix(".idx")
        self.meta_path = Path(meta_path) if meta_path is not None else self.bin_path.parent / META_NAME
        self.meta = read_meta(self.meta_path)
        self.split = self._split_entry()
        _require_file(self.bin_path, "token stream")
        _require_file(self.idx_path, "document index")
        self.vocab_size: int = self.meta["vocab_size"]
        self.eos_id: int = self.meta["eos_id"]
        self.pad_id: int | None = self.meta.get("pad_id")
        chosen = self.meta.get("seq_len") if seq_len is None else seq_len
        self.seq_len = _positive_int(chosen, "seq_len", self.meta_path if seq_len is None else self.bin_path)
        self.n_tokens = self._check_bin()
        self.n_docs = self._check_idx()
        self.tokens = self._map(self.bin_path, np.uint16, self.n_tokens)
        self._boundaries: np.ndarray | None = None

    def _split_entry(self) -> dict:
        for entry in self.meta["splits"].values():
            if entry.get("bin") == self.bin_path.name:
                return entry
        known = sorted(str(e.get("bin")) for e in self.meta["splits"].values())
        raise TokenFileError(f"{self.meta_path}: describes no split stored in {self.bin_path.name!r} (it lists {known})")

    def _check_bin(self) -> int:
        size = self.bin_path.stat().st_size
        expected = self.split.get("tokens")
        if size % 2 or size // 2 != expected:
            raise TokenFileError(
                f"{self.bin_path}: {size} bytes, but {self.meta_path.name} records {expected} {TOKEN_DTYPE} "
                f"tokens ({expected * 2 if isinstance(expected, int) else '?'} bytes); the file is truncated, "
                "or from another run"
            )
        return expected

    def _check_idx(self) -> int:
        size = self.idx_path.stat().st_size
        docs = self.split.get("documents")
        if size % 8 or not isinstance(docs, int) or size // 8 != docs + 1:
            raise TokenFileError(
                f"{self.idx_path}: {size} bytes, but {self.meta_path.name} records {docs} documents "
                f"(expected {(docs + 1) * 8 if isinstance(docs, int) else '?'} bytes of int64 offsets)"
            )
        offsets = self._map(self.idx_path, np.int64, docs + 1)
        if int(offsets[0]) != 0 or int(offsets[-1]) != self.n_tokens:
            raise TokenFileError(f"{self.idx_path}: offsets must run from 0 to {self.n_tokens} tokens")
        return docs

    @staticmethod
    def _map(path: Path, dtype: type, count: int) -> np.ndarray:
        if count == 0:
            return np.zeros(0, dtype=dtype)
        return np.memmap(path, dtype=dtype, mode="r", shape=(count,))

    def __len__(self) -> int:
        """Windows of seq_len + 1 tokens with stride seq_len (the last token of one is the first of the next)."""
        return max(self.n_tokens - 1, 0) // self.seq_len

    def window(self, i: int) -> np.ndarray:
        """Tokens ``[i * seq_len, (i + 1) * seq_len]``: seq_len + 1 of them, as uint16."""
        if not 0 <= i < len(self):
            raise IndexError(f"window {i} out of range: {self.bin_path} holds {len(self)} windows of {self.seq_len} + 1")
        start = i * self.seq_len
        return np.array(self.tokens[start:start + self.seq_len + 1])

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
            windows[row] = self.tokens[start:start + self.seq_len + 1]
        return windows[:, :-1].astype(dtype), windows[:, 1:].astype(dtype)

    def doc_boundaries(self) -> np.ndarray:
        """Start offsets of the documents in the stream plus the total (int64, documents + 1 entries)."""
        if self._boundaries is None:
            offsets = self._map(self.idx_path, np.int64, self.n_docs + 1)
            if offsets.size > 1 and np.any(offsets[1:] <= offsets[:-1]):
                raise TokenFileError(f"{self.idx_path}: offsets are not strictly increasing")
            self._boundaries = offsets
        return self._boundaries
