"""What every bench process shares (stdlib only: some workers run in other environments).

Drivers: their common arguments, logging, measured subprocesses, reference environments and the
JSON report. Workers: their ``--core`` argument, pinning to one core, peak RSS and the result
file they write for the driver.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
MEASURED_CORE_HELP = "CPU each measured process is pinned to (default: the last one available)"


class WorkerError(RuntimeError):
    """A measured process failed; the message ends with the tail of its output."""


# --- drivers ------------------------------------------------------------------------------


def log(message: str) -> None:
    """A progress line on stderr (stdout holds the report)."""
    print(message, file=sys.stderr, flush=True)


def driver_parser(doc: str, docs: int) -> argparse.ArgumentParser:
    """A driver's parser with ``--docs`` and ``--seed`` of the demo corpus it generates; add its own
    options, then call :func:`driver_args`."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=docs, help=f"demo records to generate (default {docs})")
    parser.add_argument("--seed", type=int, default=1234, help="demo corpus seed (default 1234)")
    return parser


def driver_args(parser: argparse.ArgumentParser, report_name: str,
                core_help: str = MEASURED_CORE_HELP) -> argparse.Namespace:
    """Add ``--out`` (the folder for ``report_name``) and ``--core``, parse, and refuse an unusable core."""
    parser.add_argument("--out", type=Path, default=RESULTS_DIR,
                        help=f"folder for {report_name} (default bench/results)")
    add_core_argument(parser, core_help)
    args = parser.parse_args()
    check_core(parser, args.core)
    return args


def add_core_argument(parser: argparse.ArgumentParser, help: str = MEASURED_CORE_HELP) -> None:
    """``--core N``: the CPU the measured processes are pinned to (default: the last one available)."""
    parser.add_argument("--core", type=int, default=max(os.sched_getaffinity(0)), help=help)


def check_core(parser: argparse.ArgumentParser, core: int) -> None:
    """Refuse a ``--core`` this process may not run on."""
    if core not in os.sched_getaffinity(0):
        parser.error(f"--core {core}: not one of the CPUs available here {sorted(os.sched_getaffinity(0))}")


def tail(output: str, lines: int = 15) -> str:
    """The last lines of a process's output, pip's warnings left out."""
    kept = [line for line in output.strip().splitlines() if not line.startswith("WARNING: ")]
    return "\n".join(kept[-lines:])


def run_command(command: list[str], core: int | None = None, name: str | None = None) -> float:
    """Run ``command`` from the repository root, under ``taskset -c core`` when ``core`` is given, and
    return its wall time in seconds; a failure raises WorkerError naming it (``name``, else its first words)."""
    pinned = ["taskset", "-c", str(core), *command] if core is not None else command
    start = time.perf_counter()
    done = subprocess.run(pinned, capture_output=True, text=True, cwd=REPO_DIR)
    seconds = time.perf_counter() - start
    if done.returncode:
        name = name or f"`{' '.join(command[:4])} ...`"
        raise WorkerError(f"{name} failed (exit {done.returncode}):\n{tail(done.stdout + done.stderr)}")
    return seconds


def run_worker(script: str, args: list[str], result: Path, python: Path | None = None,
               core: int | None = None) -> tuple[dict, float]:
    """Run the worker ``bench/<script> ARGS RESULT`` (with ``python``, default this one) and return the
    figures it wrote and the command's wall time. With ``core`` it runs under taskset and gets
    ``--core``; without, ``args`` carry what the worker needs to pin itself."""
    command = [str(python or sys.executable), str(BENCH_DIR / script), *args, str(result)]
    if core is not None:
        command += ["--core", str(core)]
    seconds = run_command(command, core, name=script)
    return json.loads(result.read_text(encoding="utf-8")), seconds


def reference_python(venv: Path, install: list[str], key: bytes, what: str) -> tuple[Path | None, str | None]:
    """The python of a reference environment ``venv``, created on first use with ``pip install
    *install`` (and again when ``key``, what it is made from, changes); or None and why it could
    not be. ``what`` says what it is made from in the log line."""
    digest = hashlib.sha256(key).hexdigest()[:16]
    python, stamp = venv / "bin" / "python", venv / f".installed-{digest}"
    if stamp.exists():
        return python, None
    log(f"creating {venv} {what} (first run only, about a minute)")
    shutil.rmtree(venv, ignore_errors=True)
    steps = ([sys.executable, "-m", "venv", str(venv)], [str(python), "-m", "pip", "install", "-q", *install])
    for command in steps:
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            shutil.rmtree(venv, ignore_errors=True)
            return None, f"`python {' '.join(command[1:4])} ...` failed (exit {done.returncode}):\n{tail(done.stderr)}"
    stamp.touch()
    return python, None


def throughput(docs: int, total_bytes: int, seconds: float) -> dict[str, float]:
    """docs/s, MB/s and GB per hour of one core."""
    return {"docs_per_s": docs / seconds, "mb_per_s": total_bytes / seconds / 1e6,
            "gb_per_core_hour": total_bytes / seconds * 3600 / 1e9}


def write_report(out_dir: Path, name: str, report: dict) -> Path:
    """Write the driver's figures as ``out_dir/name`` (indented JSON) and return its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / name
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return out


def run_driver(measure: Callable[[], dict], show: Callable[[dict], None], out_dir: Path, name: str,
               failed: str) -> None:
    """A driver's main: ``measure``, print the report with ``show``, write it as ``out_dir/name``;
    a measured process that fails ends the run with ``failed: why``."""
    try:
        report = measure()
    except WorkerError as err:
        sys.exit(f"{failed}: {err}")
    show(report)
    print(f"\nFigures written to {write_report(out_dir, name, report)}")


# --- workers ------------------------------------------------------------------------------


def worker_args(parser: argparse.ArgumentParser, warmup: bool = False) -> argparse.Namespace:
    """Add the worker's ``--core`` (and ``--warmup N``), parse, and pin this process to that core."""
    parser.add_argument("--core", type=int, required=True)
    if warmup:
        parser.add_argument("--warmup", type=int, default=64)
    args = parser.parse_args()
    pin_to_core(args.core)
    return args


def read_texts(path: Path) -> list[str]:
    """The texts a driver handed to a worker: one JSON string per line."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def pin_to_core(core: int) -> None:
    """Run this process (and any thread it starts) on CPU ``core`` only."""
    os.sched_setaffinity(0, {core})


def status_bytes(field: str) -> int:
    """A ``/proc/self/status`` memory field (VmRSS, VmHWM) of this process, in bytes (Linux only)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field} line")


def peak_rss_mb() -> float:
    """Peak resident set size of this process's own memory so far (VmHWM), in MiB.

    Not ``getrusage``'s ``ru_maxrss``: it survives ``exec``, so a worker started by a driver would
    report at least the driver's peak.
    """
    return status_bytes("VmHWM") / 2**20


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
