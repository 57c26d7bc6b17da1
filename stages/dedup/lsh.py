"""LSH banding: band keys, their partitions, and star edges inside each bucket."""

from __future__ import annotations

import numpy as np

from common.hashing import mix64, seeded_draws

_BAND_SEED = 0x6B696C6E


def band_keys(sigs: np.ndarray, bands: int = 16, rows: int = 8) -> np.ndarray:
    """One uint64 key per (document, band): a mix of the band's ``rows`` values, seeded by the band index.

    Two documents share a key for band ``b`` exactly when their signature values ``b*rows ..
    (b+1)*rows - 1`` are equal (up to 64-bit hash collisions); equal values in different bands give
    different keys.
    """
    sigs = np.asarray(sigs, dtype=np.uint64)
    if sigs.ndim != 2 or bands * rows > sigs.shape[1]:
        raise ValueError(f"{bands} bands x {rows} rows need a 2-D signature with >= {bands * rows} columns")
    values = sigs[:, : bands * rows].reshape(len(sigs), bands, rows)
    keys = np.broadcast_to(seeded_draws(_BAND_SEED, bands), (len(sigs), bands)).copy()
    for row in range(rows):
        keys *= np.uint64(0x9E3779B97F4A7C15)
        keys += values[:, :, row]
        keys = mix64(keys)
    return keys


def partition_of(keys: np.ndarray, partitions: int) -> np.ndarray:
    """Partition (0 .. partitions-1, int64, same shape as ``keys``) of each band key, from its high bits."""
    if partitions < 1:
        raise ValueError(f"partitions must be >= 1, got {partitions}")
    high = np.asarray(keys, dtype=np.uint64) >> np.uint64(32)
    return ((high * np.uint64(partitions)) >> np.uint64(32)).astype(np.int64)


def star_edges(doc_ids: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Edges (E x 2, int64, unique, sorted) linking each bucket's smallest doc id to its other docs.

    Rows are (doc id, band key) pairs; a bucket is the set of distinct doc ids with one key. A
    bucket of k documents gives k-1 edges (a star), never all pairs; an edge found in several
    buckets is kept once.
    """
    doc_ids = np.asarray(doc_ids, dtype=np.int64).ravel()
    keys = np.asarray(keys, dtype=np.uint64).ravel()
    if doc_ids.shape != keys.shape:
        raise ValueError(f"{doc_ids.size} doc ids for {keys.size} keys")
    order = np.lexsort((doc_ids, keys))
    doc_ids, keys = doc_ids[order], keys[order]
    new_key = np.ones(len(keys), dtype=bool)
    new_key[1:] = keys[1:] != keys[:-1]
    fresh = new_key.copy()
    fresh[1:] |= doc_ids[1:] != doc_ids[:-1]
    doc_ids, new_key = doc_ids[fresh], new_key[fresh]
    center = doc_ids[np.flatnonzero(new_key)][np.cumsum(new_key) - 1]
    left, right = center[~new_key], doc_ids[~new_key]
    order = np.lexsort((right, left))
    left, right = left[order], right[order]
    first = np.ones(len(left), dtype=bool)
    first[1:] = (left[1:] != left[:-1]) | (right[1:] != right[:-1])
    return np.stack([left[first], right[first]], axis=1)


def candidate_probability(j: float, bands: int, rows: int) -> float:
    """Probability that two documents with Jaccard ``j`` share at least one band key: 1 - (1 - j^r)^b."""
    return 1.0 - (1.0 - j**rows) ** bands
