"""Deterministic fault injection: crash a run at a named point, the way a node failure would.

``KILN_FAULT=<point>:<n>`` makes the n-th pass of this process through ``fault_point(<point>)``
kill the run with SIGKILL (``<point>:<n>:term`` sends this process SIGTERM instead, as a preemption
would, and goes on): every process of its session (the driver and the Ray processes it
started, some of which run in process groups of their own) when the process leads its session,
its process group when it leads that, else the process alone. Nothing runs afterwards:
no ``finally``, no ``atexit``, exactly as after an OOM kill. Tests use it to land a kill at a
known place instead of racing a timer. The points a run passes are logged at debug level.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections import Counter
from pathlib import Path

FAULT_ENV = "KILN_FAULT"
_passes: Counter[str] = Counter()
_log = logging.getLogger("kiln.faults")


def parse_fault(spec: str) -> tuple[str, int, bool]:
    """``"<point>:<n>[:term]"`` -> (point, n, whether to send SIGTERM); a clear ValueError for anything else."""
    term = spec.endswith(":term")
    point, sep, count = spec.removesuffix(":term").rpartition(":")
    if not sep or not point or not count.isdigit() or int(count) < 1:
        raise ValueError(f"{FAULT_ENV}={spec!r}: expected <point>:<n>[:term] with n >= 1, e.g. ingest.unit.done:2")
    return point, int(count), term


def fault_point(name: str) -> None:
    """Mark a point of the run; kill the run here if ``KILN_FAULT`` names this point and pass."""
    _passes[name] += 1
    _log.debug("fault point %s (pass %d)", name, _passes[name])
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    point, count, term = parse_fault(spec)
    if point == name and _passes[name] == count:
        if term:
            os.kill(os.getpid(), signal.SIGTERM)
            return
        _kill_the_run()


def session_members(session: int) -> list[int]:
    """The live processes (zombies left out) whose session id is ``session``, from /proc/<pid>/stat."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, *fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == session and state not in ("Z", "X"):  # fields: ppid, pgrp, session, ...
            members.append(int(stat.parent.name))
    return members


def _kill_the_run() -> None:
    me = os.getpid()
    if os.getsid(0) == me:
        for pid in session_members(me):
            if pid == me:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    if os.getpgid(0) == me:
        os.killpg(me, signal.SIGKILL)
    os.kill(me, signal.SIGKILL)
