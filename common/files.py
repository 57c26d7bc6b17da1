"""Durable file writes and checksums (standard library only: the trainer uses them too)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def file_sha256(path: Path) -> str:
    """sha256 of a file, read in 4 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(4 << 20):
            digest.update(block)
    return digest.hexdigest()


def sampled_sha256(path: Path, blocks: int = 16, block_bytes: int = 64 << 10) -> str:
    """sha256 of ``blocks`` evenly spaced blocks of a file (its first and last included) and of its size.

    A cheap content fingerprint for inputs too large to hash whole: it sees every edit inside the
    sampled blocks and every change of size, not an edit elsewhere that keeps the size."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with open(path, "rb") as handle:
        if size <= blocks * block_bytes:
            digest.update(handle.read())
            return digest.hexdigest()
        for i in range(blocks):
            handle.seek((size - block_bytes) * i // (blocks - 1))
            digest.update(handle.read(block_bytes))
    return digest.hexdigest()


def fsync_dir(path: Path) -> None:
    """Flush a file, or a directory's entries (so renames inside it survive a crash), to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to a hidden temporary file, fsync it, and rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def atomic_write_json(path: Path, data: object, *, indent: int = 2, sort_keys: bool = False) -> None:
    """Write ``data`` as UTF-8 JSON ending in a newline, atomically (see :func:`atomic_write_bytes`)."""
    text = json.dumps(data, indent=indent, sort_keys=sort_keys, ensure_ascii=False) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))
