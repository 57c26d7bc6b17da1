"""Stable, vectorized 64-bit hashing (never Python's per-process ``hash()``)."""

from __future__ import annotations

import numpy as np

_MASK64 = (1 << 64) - 1
_MIX1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX2 = np.uint64(0xC4CEB9FE1A85EC53)
_GOLDEN = 0x9E3779B97F4A7C15


def mix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer, elementwise (a bijection of uint64)."""
    x = x ^ (x >> np.uint64(33))
    x *= _MIX1
    x ^= x >> np.uint64(33)
    x *= _MIX2
    x ^= x >> np.uint64(33)
    return x


def seeded_draws(seed: int, n: int) -> np.ndarray:
    """``n`` uint64 draws from ``seed``: ``mix64`` of a Weyl sequence (stable across numpy versions)."""
    steps = [(seed + (i + 1) * _GOLDEN) & _MASK64 for i in range(n)]
    return mix64(np.array(steps, dtype=np.uint64))


def unit_interval(ids: np.ndarray, seed: int) -> np.ndarray:
    """A seeded, uniform-looking value in [0, 1) for each integer id (same id and seed, same value)."""
    salt = seeded_draws(seed, 1)[0]
    mixed = mix64(mix64(ids.astype(np.uint64) ^ salt))
    return (mixed >> np.uint64(11)).astype(np.float64) / float(1 << 53)
