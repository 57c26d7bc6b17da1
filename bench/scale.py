"""`make data`'s memory, process by process and stage by stage, at growing demo corpus sizes.

Run from anywhere with Kiln's environment:
  .venv/bin/python bench/pipeline_memory.py [--docs 5000,40000,1000000] [--keep DIR]

For each size, runs ``python -m kiln run --demo --demo-docs N`` (what ``make data DEMO_DOCS=N``
runs) in a fresh data folder and samples every process of its tree (the driver, Ray's own
processes, Ray workers) twice a second from ``/proc/<pid>/status``: VmRSS for the peak per stage
and role, VmHWM for each process's own lifetime peak. A worker is named by its process title
(``ray::<task>``), so the table says which task grew. The stage running at a sample is the last
``kiln.<stage>`` logger the driver's ``--verbose`` console output named. Demo generation is
counted as the stage ``demo``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from measure import REPO_DIR, RESULTS_DIR, log, write_report

SAMPLE_SECONDS = 0.5
STAGE_LOGGER = re.compile(r" kiln\.(demo|ingest|clean|dedup|mix|tokenize): ")
RAY_SYSTEM = ("gcs_server", "raylet", "dashboard", "log_monitor", "monitor.py", "runtime_env", "ray_client")


@dataclass
class Samples:
    """Peaks seen so far: per (stage, role) the largest RSS of one process and of the whole tree."""

    stage: str = "demo"
    process_peak: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    tree_peak: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    lifetime_peak: dict[int, tuple[str, int]] = field(default_factory=dict)
    stage_start: dict[str, float] = field(default_factory=dict)


def status_kib(pid: int) -> dict[str, int] | None:
    """VmRSS and VmHWM of ``pid`` in KiB, or None when it has exited."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = dict(line.split(":", 1) for line in lines if ":" in line)
    if "VmRSS" not in fields:
        return None
    return {name: int(fields[name].split()[0]) for name in ("VmRSS", "VmHWM")}


def descendants(root: int) -> list[int]:
    """``root`` and every process below it (by /proc/<pid>/stat's parent field)."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children[parent].append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def role(pid: int, driver: int) -> str:
    """``driver``, ``ray::<task>`` for a worker, ``ray-system`` for Ray's own daemons, else the program."""
    if pid == driver:
        return "driver"
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "gone"
    if command.startswith("ray::"):
        return command.split()[0]
    if any(name in command for name in RAY_SYSTEM):
        return "ray-system"
    return Path(command.split()[0]).name if command else "unknown"


def sample(driver: int, samples: Samples, stop: threading.Event) -> None:
    """Record the tree's memory every SAMPLE_SECONDS until ``stop`` is set."""
    while not stop.is_set():
        total = 0
        for pid in descendants(driver):
            memory = status_kib(pid)
            if memory is None:
                continue
            name = role(pid, driver)
            name = "ray::IDLE" if name.startswith("ray::IDLE") else name
            total += memory["VmRSS"]
            key = (samples.stage, name)
            samples.process_peak[key] = max(samples.process_peak[key], memory["VmRSS"])
            previous = samples.lifetime_peak.get(pid, ("", 0))[1]
            samples.lifetime_peak[pid] = (name, max(previous, memory["VmHWM"]))
        samples.tree_peak[samples.stage] = max(samples.tree_peak[samples.stage], total)
        stop.wait(SAMPLE_SECONDS)


def measure_size(docs: int, data_dir: Path) -> dict:
    """Run the pipeline on ``docs`` demo records in ``data_dir`` and return its memory figures."""
    command = [sys.executable, "-m", "kiln", "run", "--demo", "--demo-docs", str(docs),
               "--data-dir", str(data_dir), "--verbose"]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO_DIR, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, errors="replace")
    samples, stop = Samples(), threading.Event()
    samples.stage_start["demo"] = 0.0
    sampler = threading.Thread(target=sample, args=(process.pid, samples, stop), daemon=True)
    sampler.start()
    tail: list[str] = []
    for line in process.stderr:
        tail = (tail + [line.rstrip()])[-20:]
        if (match := STAGE_LOGGER.search(line)) and match.group(1) != samples.stage:
            samples.stage = match.group(1)
            samples.stage_start.setdefault(samples.stage, time.perf_counter() - start)
            log(f"  {docs:,} records: {samples.stage} from {samples.stage_start[samples.stage]:.0f} s")
    code = process.wait()
    wall = time.perf_counter() - start
    stop.set()
    sampler.join()
    if code:
        sys.exit(f"`kiln run --demo --demo-docs {docs}` failed (exit {code}):\n" + "\n".join(tail))
    stages = list(samples.stage_start)
    ends = [samples.stage_start[s] for s in stages[1:]] + [wall]
    per_stage = {}
    for stage, end in zip(stages, ends, strict=True):
        roles = {name: kib for (s, name), kib in samples.process_peak.items() if s == stage}
        workers = {name: kib for name, kib in roles.items() if name.startswith("ray::")}
        per_stage[stage] = {
            "seconds": end - samples.stage_start[stage],
            "driver_mb": roles.get("driver", 0) / 1024,
            "largest_worker": max(workers, key=workers.get) if workers else None,
            "largest_worker_mb": max(workers.values(), default=0) / 1024,
            "tree_mb": samples.tree_peak[stage] / 1024,
            "roles_mb": {name: kib / 1024 for name, kib in sorted(roles.items())},
        }
    lifetime = defaultdict(int)
    for name, kib in samples.lifetime_peak.values():
        lifetime[name] = max(lifetime[name], kib)
    return {"docs": docs, "seconds": wall, "stages": per_stage,
            "process_lifetime_peak_mb": {name: kib / 1024 for name, kib in sorted(lifetime.items())},
            "tree_peak_mb": max(samples.tree_peak.values()) / 1024}


def show(report: dict) -> None:
    """Print one table per size and the growth of each stage's largest process."""
    for size in report["sizes"]:
        print(f"\n{size['docs']:,} demo records: {size['seconds']:.0f} s, whole tree peak {size['tree_peak_mb']:,.0f} MB")
        print(f"  {'stage':<9} {'seconds':>8} {'driver MB':>10} {'largest worker':>28} {'MB':>7} {'tree MB':>8}")
        for stage, row in size["stages"].items():
            print(f"  {stage:<9} {row['seconds']:>8.1f} {row['driver_mb']:>10,.0f} "
                  f"{row['largest_worker'] or '-':>28} {row['largest_worker_mb']:>7,.0f} {row['tree_mb']:>8,.0f}")
    if len(report["sizes"]) > 1:
        first, last = report["sizes"][0], report["sizes"][-1]
        added = last["docs"] - first["docs"]
        print(f"\nGrowth from {first['docs']:,} to {last['docs']:,} records (KB per added record):")
        for stage in last["stages"]:
            if stage not in first["stages"]:
                continue
            for what in ("driver_mb", "largest_worker_mb"):
                grown = last["stages"][stage][what] - first["stages"][stage][what]
                print(f"  {stage:<9} {what.removesuffix('_mb'):<15} {grown * 1024 / added * 1024 / 1000:>7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", default="5000,40000,1000000",
                        help="comma-separated demo corpus sizes (default 5000,40000,1000000)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="run in DIR/<size> and keep the data there (default: temporary folders, removed)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="folder for pipeline_memory.json")
    args = parser.parse_args()
    sizes = [int(n) for n in args.docs.split(",")]
    results = []
    for docs in sizes:
        log(f"kiln run --demo --demo-docs {docs:,}")
        if args.keep:
            results.append(measure_size(docs, args.keep / str(docs)))
        else:
            with tempfile.TemporaryDirectory(prefix="kiln-memory-") as folder:
                results.append(measure_size(docs, Path(folder)))
    report = {"sizes": results}
    show(report)
    print(f"\nFigures written to {write_report(args.out, 'pipeline_memory.json', report)}")


if __name__ == "__main__":
    main()
