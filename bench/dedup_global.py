"""Bench worker: the dedup stage's global step (``decide_clusters``), measured task by task or on Ray.

Usage (started by bench/dedup.py):
  dedup_global.py tasks WORK_DIR RESULT.json --shards S --partitions P --core C
  dedup_global.py ray WORK_DIR RESULT.json --shards S --partitions P --core C
  dedup_global.py steps DATA_DIR WORK_DIR RESULT.json --core C

WORK_DIR holds the signature step's outputs (dedup_synth.py writes them). ``tasks`` runs
``decide_clusters`` with a runner that runs each task in this process, one after the other, and
records per task: its step (the runner's ``point``), wall and CPU seconds, its peak memory over
the memory before it (the peak is reset with /proc/self/clear_refs, then read as VmHWM), the
bytes it read (``rchar`` of /proc/self/io, plus, for an LSH partition task, the signature rows
it reads through its memory map: candidates x 2 x num_perm x 8) and the files it opened for
reading. ``ray`` runs the real ``decide_clusters`` on a private local Ray (``ray.num_cpus=1``) and
records this driver's peak over its memory after Ray's start. ``steps`` runs the whole global
step on DATA_DIR/clean in this process: ``signature_task`` per shard, then ``decide_clusters``,
task by task as ``tasks`` does.
"""

from __future__ import annotations

import argparse
import ctypes
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dedup_synth import folder_sizes
from measure import status_bytes, worker_args, write_result

from common.config import KilnConfig, load_config
from common.manifest import require_manifest
from stages.dedup.stage import decide_clusters, lsh_partition_task, signature_task

SIGNATURE_VALUE_BYTES = 8
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR
LIBC = ctypes.CDLL("libc.so.6")


def bytes_read() -> int:
    """Bytes this process has read so far through read() and friends (page cache included)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise RuntimeError("/proc/self/io has no rchar line")


def reset_peak() -> int:
    """Hand freed heap memory back to the kernel (glibc ``malloc_trim``), reset this process's peak RSS
    (VmHWM) to its current RSS, and return that, in bytes."""
    LIBC.malloc_trim(0)
    Path("/proc/self/clear_refs").write_text("5")
    return status_bytes("VmRSS")


class FileReads:
    """The distinct files under ``root`` this process opens for reading while :meth:`counting`."""

    def __init__(self, root: Path):
        self.root = os.fspath(root)
        self.paths: set[str] | None = None
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple) -> None:
        if event != "open" or self.paths is None or not isinstance(args[0], str | os.PathLike):
            return
        path, mode, flags = os.fspath(args[0]), args[1], args[2]
        writes = flags & WRITE_FLAGS if mode is None else any(c in mode for c in "wax+")
        if path.startswith(self.root) and not writes and not os.path.isdir(path):
            self.paths.add(path)

    @contextmanager
    def counting(self) -> Iterator[set[str]]:
        self.paths = set()
        try:
            yield self.paths
        finally:
            self.paths = None


class MeasuredRunner:
    """A ``run_tasks`` stand-in: each task in this process, one after the other, measured."""

    def __init__(self, work: Path, num_perm: int):
        self.reads = FileReads(work)
        self.row_bytes = 2 * num_perm * SIGNATURE_VALUE_BYTES
        self.tasks: list[dict] = []

    def __call__(self, fn: Callable, calls: list[tuple], cfg: KilnConfig, desc: str, log: logging.Logger,
                 point: str) -> list:
        return [self.measure(fn, args, point) for args in calls]

    def measure(self, fn: Callable, args: tuple, point: str) -> object:
        baseline, read_before = reset_peak(), bytes_read()
        cpu, start = time.process_time(), time.perf_counter()
        with self.reads.counting() as files:
            result = fn(*args)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        mapped = result["candidates"] * self.row_bytes if fn is lsh_partition_task else 0
        self.tasks.append({"step": point, "seconds": seconds, "cpu_s": cpu,
                           "peak_bytes": status_bytes("VmHWM") - baseline, "baseline_bytes": baseline,
                           "read_bytes": bytes_read() - read_before + mapped, "mapped_bytes": mapped,
                           "files": len(files)})
        return result


def config(partitions: int | None, *overrides: str) -> KilnConfig:
    """The default config, with ``partitions`` when given."""
    return load_config(overrides=[*overrides, *([f"dedup.partitions={partitions}"] if partitions else [])])


def run_measured(work: Path, shards: int, partitions: int, log: logging.Logger) -> dict:
    """``decide_clusters`` task by task in this process."""
    cfg = config(partitions)
    runner = MeasuredRunner(work, cfg.dedup.num_perm)
    start = time.perf_counter()
    summary = decide_clusters(work, shards, cfg, log, run=runner)
    return {"summary": summary, "seconds": time.perf_counter() - start, "tasks": runner.tasks,
            "written": folder_sizes(work)}


def run_on_ray(work: Path, shards: int, partitions: int, log: logging.Logger) -> dict:
    """The real ``decide_clusters`` on a private local Ray with one CPU; this driver's peak over its baseline."""
    import ray

    from common.ray_cluster import ensure_ray

    cfg = config(partitions, "ray.num_cpus=1")
    ensure_ray(cfg.ray)
    baseline = reset_peak()
    start = time.perf_counter()
    summary = decide_clusters(work, shards, cfg, log)
    seconds = time.perf_counter() - start
    figures = {"summary": summary, "seconds": seconds, "driver_baseline_bytes": baseline,
               "driver_peak_bytes": status_bytes("VmHWM") - baseline,
               "driver_end_bytes": status_bytes("VmRSS") - baseline}
    ray.shutdown()
    return figures


def run_steps(data_dir: Path, work: Path, log: logging.Logger) -> dict:
    """The stage's global step on DATA_DIR/clean in this process: signature tasks, then ``decide_clusters``."""
    cfg = config(None)
    input_dir = data_dir / "clean"
    shards = require_manifest(input_dir).shards
    runner = MeasuredRunner(work, cfg.dedup.num_perm)
    calls = [(str(input_dir), info.to_dict(), i, str(work), cfg.dedup) for i, info in enumerate(shards)]
    docs = sum(runner(signature_task, calls, cfg, "dedup signatures", log, "dedup.signature"))
    summary = decide_clusters(work, len(shards), cfg, log, run=runner)
    parts: dict[str, float] = {}
    for task in runner.tasks:
        parts[task["step"]] = parts.get(task["step"], 0.0) + task["seconds"]
    return {"docs": docs, "shards": len(shards), "partitions": cfg.dedup.partitions, "summary": summary,
            "parts_s": parts, "tasks": len(runner.tasks)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["tasks", "ray", "steps"])
    parser.add_argument("paths", type=Path, nargs="+", help="WORK_DIR (tasks, ray) or DATA_DIR WORK_DIR (steps)")
    parser.add_argument("result", type=Path)
    parser.add_argument("--shards", type=int)
    parser.add_argument("--partitions", type=int)
    args = worker_args(parser)
    if len(args.paths) != (2 if args.mode == "steps" else 1):
        parser.error(f"{args.mode}: wrong number of folders {[str(p) for p in args.paths]}")
    log = logging.getLogger("kiln.bench")
    if args.mode == "steps":
        figures = run_steps(*args.paths, log)
    elif args.mode == "tasks":
        figures = run_measured(args.paths[0], args.shards, args.partitions, log)
    else:
        figures = run_on_ray(args.paths[0], args.shards, args.partitions, log)
    write_result(args.result, figures)


if __name__ == "__main__":
    main()
