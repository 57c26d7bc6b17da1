"""Packing one split: a seeded document order with repeats expanded, flat uint16 streams and their indexes.

A split is packed as one stream (``<split>.bin`` / ``.idx``), or, when its unit shards hold more
than ``max_documents`` documents, as several (``<split>-NNNNN.bin`` / ``.idx``), each from a run of
consecutive unit shards with at most that many documents: the packer's memory (about 100 bytes per
document copy) is then bounded by ``max_documents``, not by the corpus. The token reader
(common/tokens.py) reads the streams of a split one after the other as one.

For each stream the units' token lists are first copied into one flat scratch file (a hidden
temporary under ``_work/``, removed afterwards), which is memory-mapped and read in the shuffled
order chunk by chunk: memory holds the per-document index and one chunk, never the tokens twice.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa

from common.files import atomic_writer, sampled_sha256
from common.hashing import mix64, seeded_draws
from common.runner import WORK_DIR
from common.shards import ShardInfo, iter_batches

CHUNK_TOKENS = 1 << 20  # tokens gathered at a time: _gather's index arrays take 8 bytes a token


@dataclass
class SplitTally:
    """Counts of one packed split: tokens and documents as they appear in the stream (repeats included)."""

    tokens: int = 0
    documents: int = 0
    unique_documents: int = 0
    unique_tokens: int = 0
    tokens_by_category: Counter = field(default_factory=Counter)
    tokens_by_source: Counter = field(default_factory=Counter)
    tokens_by_lang: Counter = field(default_factory=Counter)

    def add(self, batch: pa.RecordBatch, lengths: np.ndarray, repeats: np.ndarray) -> None:
        weights = lengths * repeats
        self.tokens += int(weights.sum())
        self.documents += int(repeats.sum())
        self.unique_documents += batch.num_rows
        self.unique_tokens += int(lengths.sum())
        for column, counter in (("category", self.tokens_by_category), ("source", self.tokens_by_source),
                                ("lang", self.tokens_by_lang)):
            counter.update(_weighted_counts(batch.column(column), weights))

    def to_dict(self) -> dict:
        return {
            "tokens": self.tokens,
            "documents": self.documents,
            "unique_documents": self.unique_documents,
            "unique_tokens": self.unique_tokens,
            "tokens_by_category": dict(sorted(self.tokens_by_category.items())),
            "tokens_by_source": dict(sorted(self.tokens_by_source.items())),
            "tokens_by_lang": dict(sorted(self.tokens_by_lang.items())),
        }


def _weighted_counts(column: pa.Array, weights: np.ndarray) -> dict[str, int]:
    if isinstance(column.type, pa.DictionaryType):
        column = column.cast(pa.string())
    table = pa.table({"key": column, "w": pa.array(weights, pa.int64())})
    grouped = table.group_by("key").aggregate([("w", "sum")])
    return {str(k): int(w) for k, w in zip(grouped.column("key").to_pylist(), grouped.column("w_sum").to_pylist(),
                                           strict=True)}


def shuffled_order(doc_ids: np.ndarray, repeats: np.ndarray, seed: int) -> np.ndarray:
    """Document positions in stream order: each document ``repeats`` times, every copy placed by a
    seeded hash of (doc_id, copy number), so the order depends on the seed and the ids only."""
    positions = np.repeat(np.arange(doc_ids.size, dtype=np.int64), repeats)
    copies = np.arange(positions.size, dtype=np.int64) - np.repeat(np.cumsum(repeats) - repeats, repeats)
    salt = seeded_draws(seed, 2)[1]
    keys = mix64(mix64(doc_ids[positions].astype(np.uint64) ^ salt) ^ mix64(copies.astype(np.uint64) + np.uint64(1)))
    return positions[np.argsort(keys, kind="stable")]


class HashedFile:
    """A binary file being written, with the sha256 of what went into it."""

    def __init__(self, handle: BinaryIO):
        self.handle = handle
        self.digest = hashlib.sha256()

    def write(self, array: np.ndarray) -> None:
        data = memoryview(np.ascontiguousarray(array)).cast("B")
        self.handle.write(data)
        self.digest.update(data)


@contextmanager
def atomic_stream(path: Path) -> Iterator[HashedFile]:
    """Write ``path`` atomically (see :func:`common.files.atomic_writer`), hashing what goes into it."""
    with atomic_writer(path) as handle:
        yield HashedFile(handle)


def _gather(tokens: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of ``tokens[s:s + n]`` for each (s, n)."""
    shift = starts - (np.cumsum(lengths) - lengths)
    return tokens[np.repeat(shift, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)]


def stream_groups(shards: list[ShardInfo], max_documents: int) -> list[list[ShardInfo]]:
    """Consecutive runs of unit shards, each holding at most ``max_documents`` documents (a bigger shard alone)."""
    groups: list[list[ShardInfo]] = []
    rows = 0
    for info in shards:
        if not groups or rows + info.rows > max_documents:
            groups.append([])
            rows = 0
        groups[-1].append(info)
        rows += info.rows
    return groups or [[]]


def pack_split(stage_dir: Path, split: str, shards: list[ShardInfo], seed: int,
               max_documents: int) -> tuple[list[ShardInfo], dict]:
    """Write the split's stream(s) from its unit shards; return the files (.bin, .idx per stream) and the tally.

    The tally holds the split's totals, ``checksums`` (the sha256 and sampled sha256 of each file, which
    the trainer verifies) and, when it has several streams, ``streams``: each one's files, tokens and
    documents, in reading order."""
    tally = SplitTally()
    groups = stream_groups(shards, max_documents)
    infos: list[ShardInfo] = []
    streams = []
    for number, group in enumerate(groups):
        stem = split if len(groups) == 1 else f"{split}-{number:05d}"
        bin_info, idx_info = pack_stream(stage_dir, stem, group, seed, tally)
        infos += [bin_info, idx_info]
        streams.append({"bin": bin_info.path, "idx": idx_info.path, "tokens": bin_info.rows,
                        "documents": idx_info.rows})
    checksums = {info.path: {"sha256": info.sha256, "sampled_sha256": sampled_sha256(stage_dir / info.path)}
                 for info in infos}
    result = tally.to_dict() | {"checksums": checksums}
    return infos, result if len(groups) == 1 else {"streams": streams, **result}


def pack_stream(stage_dir: Path, stem: str, shards: list[ShardInfo], seed: int,
                tally: SplitTally) -> tuple[ShardInfo, ShardInfo]:
    """Write ``<stem>.bin`` and ``<stem>.idx`` from ``shards``, adding their documents to ``tally``."""
    doc_ids, repeats, lengths = [], [], []
    scratch = stage_dir / WORK_DIR / f".{stem}-tokens.tmp-{os.getpid()}"
    try:
        with open(scratch, "wb") as sink:
            for info in shards:
                for batch in iter_batches(stage_dir, info):
                    tokens = batch.column("tokens")
                    batch_lengths = tokens.value_lengths().to_numpy(zero_copy_only=False).astype(np.int64)
                    batch_repeats = batch.column("repeat").to_numpy(zero_copy_only=False).astype(np.int64)
                    sink.write(memoryview(tokens.flatten().to_numpy(zero_copy_only=False)).cast("B"))
                    doc_ids.append(batch.column("doc_id").to_numpy(zero_copy_only=False))
                    repeats.append(batch_repeats)
                    lengths.append(batch_lengths)
                    tally.add(batch, batch_lengths, batch_repeats)
        ids = np.concatenate(doc_ids) if doc_ids else np.zeros(0, np.int64)
        doc_lengths = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
        starts = np.cumsum(doc_lengths) - doc_lengths
        order = shuffled_order(ids, np.concatenate(repeats) if repeats else np.zeros(0, np.int64), seed)
        offsets = np.zeros(order.size + 1, np.int64)
        np.cumsum(doc_lengths[order], out=offsets[1:])
        bin_path, idx_path = stage_dir / f"{stem}.bin", stage_dir / f"{stem}.idx"
        with atomic_stream(bin_path) as out:
            begin = 0
            while begin < order.size:
                end = max(int(np.searchsorted(offsets, offsets[begin] + CHUNK_TOKENS, side="right")) - 1, begin + 1)
                chosen = order[begin:end]
                # Mapped for one chunk only: the pages a chunk reads leave the process with the mapping.
                flat = np.memmap(scratch, dtype=np.uint16, mode="r")
                out.write(_gather(flat, starts[chosen], doc_lengths[chosen]))
                del flat
                begin = end
            bin_sha = out.digest.hexdigest()
        with atomic_stream(idx_path) as out:
            out.write(offsets)
            idx_sha = out.digest.hexdigest()
    finally:
        scratch.unlink(missing_ok=True)
    return (ShardInfo(path=bin_path.name, rows=int(offsets[-1]), bytes=bin_path.stat().st_size, sha256=bin_sha),
            ShardInfo(path=idx_path.name, rows=int(order.size), bytes=idx_path.stat().st_size, sha256=idx_sha))
