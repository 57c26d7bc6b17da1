"""Partitioned files between dedup's steps (a shuffle through the shared volume).

A task routes each row it emits to a target partition and writes one file per target partition
it has rows for, ``<root>/p-NNNNN/<source>.npz``, named after itself. A task of the next step reads
only its own partition's folder, so the bytes it reads are its share of the step, never the
whole corpus. Every file is written under a temporary name and renamed, and a task's outputs
depend only on its inputs, so a task rerun after a crash rewrites exactly the same files.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from common.files import atomic_write_bytes, atomic_write_json
from common.hashing import mix64
from stages.dedup.lsh import partition_of


def save_npz(path: Path, **arrays: np.ndarray) -> None:
    """np.savez to a temporary name, then an atomic rename (a killed run leaves nothing half-written)."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, buffer.getvalue())


def node_partition(ids: np.ndarray, partitions: int) -> np.ndarray:
    """Partition (int64) of each document id: spread by a 64-bit mix, the same on every node."""
    return partition_of(mix64(np.asarray(ids, dtype=np.int64).astype(np.uint64)), partitions)


def partition_dir(root: Path, partition: int) -> Path:
    """The folder holding every file routed to ``partition`` under ``root``."""
    return root / f"p-{partition:05d}"


def write_partitioned(root: Path, source: str, partition: np.ndarray, partitions: int,
                      **columns: np.ndarray) -> None:
    """Write the rows of ``columns`` (equal lengths) to their ``partition``'s folder, one file per partition with rows."""
    partition = np.asarray(partition, dtype=np.int64)
    order = np.argsort(partition, kind="stable")
    bounds = np.searchsorted(partition[order], np.arange(partitions + 1))
    for target in np.flatnonzero(np.diff(bounds)):
        rows = order[bounds[target]: bounds[target + 1]]
        save_npz(partition_dir(root, int(target)) / f"{source}.npz", **{k: v[rows] for k, v in columns.items()})


def read_partition(root: Path, partition: int, dtypes: dict[str, str]) -> dict[str, np.ndarray]:
    """Every row routed to ``partition`` under ``root`` (files in name order), as one array per column."""
    files = sorted(partition_dir(root, partition).glob("*.npz"))
    parts: dict[str, list[np.ndarray]] = {name: [] for name in dtypes}
    for file in files:
        with np.load(file) as data:
            for name in dtypes:
                parts[name].append(data[name])
    return {name: np.concatenate(parts[name]) if parts[name] else np.zeros(0, dtype=dtype)
            for name, dtype in dtypes.items()}


def once(marker: Path, work: Callable[[], dict]) -> dict:
    """Run ``work`` unless ``marker`` records that it finished; the marker (its result, JSON) is written last."""
    if marker.exists():
        return json.loads(marker.read_text(encoding="utf-8"))
    result = work()
    atomic_write_json(marker, result)
    return result
