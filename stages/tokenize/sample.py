"""The tokenizer's training sample: the documents with the lowest seeded hash, up to a byte budget.

One pass over the training shards keeps a pool of the lowest-hash documents whose cumulative
size (in hash order) starts below the budget; the pool is returned in shard order. The same
shards, seed and budget always give the same sample, spread evenly over the whole split.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from common.hashing import mix64, seeded_draws
from common.shards import ShardInfo, iter_batches


def doc_hashes(doc_ids: np.ndarray, seed: int) -> np.ndarray:
    """A seeded uint64 hash per doc_id (the sample's order)."""
    salt = seeded_draws(seed, 1)[0]
    return mix64(mix64(doc_ids.astype(np.uint64) ^ salt))


def _text_bytes(batch: pa.RecordBatch) -> np.ndarray:
    return pc.binary_length(batch.column("text")).to_numpy(zero_copy_only=False).astype(np.int64)


def sample_texts(input_dir: Path, shards: list[ShardInfo], budget: int, seed: int) -> list[str]:
    """Texts of the sample, in shard order."""
    hashes = np.zeros(0, np.uint64)
    places = np.zeros(0, np.int64)
    sizes = np.zeros(0, np.int64)
    texts = np.zeros(0, object)
    position = 0
    for info in shards:
        for batch in iter_batches(input_dir, info):
            batch_hashes = doc_hashes(batch.column("doc_id").to_numpy(), seed)
            candidates = np.arange(batch.num_rows)
            if sizes.sum() >= budget:
                candidates = candidates[batch_hashes < hashes[-1]]
            if candidates.size:
                chosen = pa.array(candidates)
                picked = np.empty(candidates.size, object)
                picked[:] = batch.column("text").take(chosen).to_pylist()
                hashes = np.concatenate([hashes, batch_hashes[candidates]])
                places = np.concatenate([places, position + candidates])
                sizes = np.concatenate([sizes, _text_bytes(batch)[candidates]])
                texts = np.concatenate([texts, picked])
                order = np.lexsort((places, hashes))
                keep = order[(np.cumsum(sizes[order]) - sizes[order]) < budget]
                hashes, places, sizes, texts = hashes[keep], places[keep], sizes[keep], texts[keep]
            position += batch.num_rows
    return texts[np.argsort(places)].tolist()


def leading_texts(input_dir: Path, shards: list[ShardInfo], budget: int) -> Iterator[str]:
    """The first documents in shard order, up to about ``budget`` bytes."""
    used = 0
    for info in shards:
        for batch in iter_batches(input_dir, info):
            for text in batch.column("text").to_pylist():
                if used >= budget:
                    return
                used += len(text.encode("utf-8"))
                yield text
