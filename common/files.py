"""Durable file writes and checksums (standard library only: the trainer uses them too)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from common.errors import DiskFullError


def file_sha256(path: Path) -> str:
    """sha256 of a file, read in 4 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(4 << 20):
            digest.update(block)
    return digest.hexdigest()


def sampled_blocks(size: int, blocks: int = 16, block_bytes: int = 64 << 10) -> list[tuple[int, int]]:
    """(offset, length) of ``blocks`` evenly spaced blocks of a ``size``-byte file, its first and last
    included; the whole file as one block when it is not larger than the blocks together."""
    if size <= blocks * block_bytes:
        return [(0, size)]
    return [((size - block_bytes) * i // (blocks - 1), block_bytes) for i in range(blocks)]


def sampled_sha256(path: Path, blocks: int = 16, block_bytes: int = 64 << 10) -> str:
    """sha256 of the size of a file and of its :func:`sampled_blocks`.

    A cheap content fingerprint for inputs too large to hash whole: it sees every edit inside the
    sampled blocks and every change of size, not an edit elsewhere that keeps the size."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with open(path, "rb") as handle:
        for offset, length in sampled_blocks(size, blocks, block_bytes):
            handle.seek(offset)
            digest.update(handle.read(length))
    return digest.hexdigest()


def fsync_dir(path: Path) -> None:
    """Flush a file, or a directory's entries (so renames inside it survive a crash), to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """A binary file written under a hidden temporary name beside ``path``; on a clean exit it is fsynced and
    renamed over ``path``, on an exception removed (``path`` is left as it was)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_writer`)."""
    with atomic_writer(path) as handle:
        handle.write(data)


def atomic_write_json(path: Path, data: object, *, indent: int = 2, sort_keys: bool = False) -> None:
    """Write ``data`` as UTF-8 JSON ending in a newline, atomically (see :func:`atomic_write_bytes`)."""
    text = json.dumps(data, indent=indent, sort_keys=sort_keys, ensure_ascii=False) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))


def human_bytes(n: int) -> str:
    """1536 -> '1.5 KiB'."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def is_disk_full(err: BaseException) -> bool:
    """Whether ``err`` is a write refused for want of space (ENOSPC, or a quota: EDQUOT)."""
    return isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT)


def disk_full_error(what: str, folder: Path, needed: int | None = None, then: str = "rerun") -> DiskFullError:
    """The error for ``what`` having run out of space while writing under ``folder``: the filesystem's free
    and total space, the estimate ``needed`` when known, and what to do."""
    existing = next(p for p in (Path(folder), *Path(folder).absolute().parents) if p.exists())
    usage = shutil.disk_usage(existing)
    need = f"; it needs about {human_bytes(needed)} in all" if needed else ""
    return DiskFullError(f"{what}: no space left on the filesystem of {folder} ({human_bytes(usage.free)} free of "
                         f"{human_bytes(usage.total)}){need}. Nothing half-written was kept: free space there, or "
                         f"use another --data-dir, then {then}")
