"""One run at a time per DATA_DIR: an advisory lock file that names its holder.

``DATA_DIR/.kiln.lock`` is held with ``flock`` for as long as a run (a stage, or the whole
pipeline) lasts, and holds the holder's host, pid, command and start time. A second run finds
the lock held and refuses at once, naming the holder. A run killed outright releases the
``flock`` with its process, so the next run finds the file unlocked and takes it over, saying
that the previous holder left without releasing it. ``flock`` covers every process of one host
and, on a shared volume, the hosts whose file system honours it (NFSv4 and CephFS do).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from common.errors import KilnError

LOCK_NAME = ".kiln.lock"
_held: dict[Path, int] = {}
"""Lock files this process holds, with how many nested holds each has."""


class RunLockedError(KilnError):
    """Another run holds DATA_DIR."""


def _holder(text: str) -> str:
    try:
        info = json.loads(text)
        return f"pid {info['pid']} on {info['host']} (started {info['started_at']}: {info['command']})"
    except (ValueError, KeyError, TypeError):
        return "an unknown holder"


@contextlib.contextmanager
def data_dir_lock(data_dir: Path, log: logging.Logger) -> Iterator[None]:
    """Hold DATA_DIR's lock for the block (re-entrant inside one process); refuse if another run holds it."""
    path = (Path(data_dir) / LOCK_NAME).resolve()
    if path in _held:
        _held[path] += 1
        try:
            yield
        finally:
            _held[path] -= 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunLockedError(f"{data_dir} is in use by another run: {_holder(_read(fd))}; wait for it, or give "
                                 "this run another --data-dir") from None
        previous = _read(fd)
        if previous.strip():
            log.warning("%s: taking over the lock of a run that ended without releasing it: %s", path,
                        _holder(previous))
        me = {"host": socket.gethostname(), "pid": os.getpid(), "command": " ".join(sys.argv),
              "started_at": datetime.now(UTC).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        _held[path] = 1
        try:
            yield
        finally:
            del _held[path]
            os.ftruncate(fd, 0)  # released cleanly: the next run finds an empty, unlocked file
    finally:
        os.close(fd)


def _read(fd: int) -> str:
    return os.pread(fd, 4096, 0).decode("utf-8", errors="replace")
