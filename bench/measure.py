"""What every bench worker process shares: pinning to one core, peak RSS, writing its result (stdlib only)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def add_core_argument(parser: argparse.ArgumentParser) -> None:
    """``--core N``: the CPU each measured process is pinned to (default: the last one available)."""
    parser.add_argument("--core", type=int, default=max(os.sched_getaffinity(0)),
                        help="CPU each measured process is pinned to (default: the last one available)")


def check_core(parser: argparse.ArgumentParser, core: int) -> None:
    """Refuse a ``--core`` this process may not run on."""
    if core not in os.sched_getaffinity(0):
        parser.error(f"--core {core}: not one of the CPUs available here {sorted(os.sched_getaffinity(0))}")


def read_texts(path: Path) -> list[str]:
    """The texts a driver handed to a worker: one JSON string per line."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def pin_to_core(core: int) -> None:
    """Run this process (and any thread it starts) on CPU ``core`` only."""
    os.sched_setaffinity(0, {core})


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextmanager
def timed(seconds: dict[str, float], name: str) -> Iterator[None]:
    """Add the wall time of the block to ``seconds[name]``."""
    start = time.perf_counter()
    try:
        yield
    finally:
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start


def write_result(path: Path, result: dict) -> None:
    """Write a worker's figures, with its core and peak RSS, for the driver to read."""
    result |= {"core": sorted(os.sched_getaffinity(0)), "peak_rss_mb": peak_rss_mb()}
    path.write_text(json.dumps(result, indent=2), encoding="utf-8")
