"""A small size-limited filesystem (tmpfs) that a test mounts, fills and removes."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _mount(folder: Path, size_bytes: int, remount: bool = False) -> subprocess.CompletedProcess:
    options = f"{'remount,' if remount else ''}size={size_bytes}"
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True, text=True)


@contextmanager
def small_filesystem(folder: Path, size_bytes: int) -> Iterator[Path]:
    """``folder`` as a tmpfs of ``size_bytes`` for the block, unmounted afterwards; the test is skipped where
    this process may not mount one (it needs root, as in CI)."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = _mount(folder, size_bytes)
    if mounted.returncode:
        pytest.skip(f"cannot mount a size-limited tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], check=True)


def grow(folder: Path, size_bytes: int) -> None:
    """Give the tmpfs at ``folder`` a new size (what freeing space looks like to the run)."""
    resized = _mount(folder, size_bytes, remount=True)
    assert resized.returncode == 0, resized.stderr
