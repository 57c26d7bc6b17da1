"""`make data` at scale: wall time, docs/s and every process's memory per stage, and kills anywhere in a big run.

Run from anywhere with Kiln's environment:
  .venv/bin/python bench/scale.py                                # 100k, 1M demo records: about 2 + 20-25 min, 2 cores
  .venv/bin/python bench/scale.py --kill 3                       # 3 kills in a 1M run and a resume: one more 1M run
  .venv/bin/python bench/scale.py --docs 2000,4000 --out /tmp/s  # a try: under a minute a size

For each size N, runs ``python -m kiln run --demo --demo-docs N --verbose`` (what ``make data DEMO_DOCS=N``
runs) in a fresh data folder and samples every process of its tree (the driver, Ray's own processes, the Ray
workers, their children) twice a second and whenever a stage begins, from ``/proc/<pid>/status``. A
process's peak in a stage is the largest VmRSS sampled in it, or its VmHWM when that rose since the previous
sample (so a spike between two samples counts when it sets the process's record). A worker is named by its
process title (``ray::<task>``, ``ray::IDLE`` between tasks); Ray's daemons and agents are ``ray-system``.
The stage at a sample is the last ``kiln.<stage>`` logger the driver's output named. A stage's time runs
from then to its ``_manifest.json``'s mtime: ingest's includes Ray's start; the run's end (status table,
Ray's shutdown) is in tokenize's samples but not its time. Demo generation is the stage ``demo`` (until
ingest is named), recorded but left out of the goals. Per stage: seconds, documents in and out (from its
manifest), docs in per second, the driver's peak, each role's, the largest single process and the whole
tree's (the sum of the processes' RSS).

Goals, each printed met or not: at the largest size no process above 1 GB (1,024 MB); each stage's largest
process at the largest size at most 1.2x its peak at the smallest; each stage's time at most 1.1x the ratio
of the sizes (11x from 100k to 1M).

``--kill K`` then draws K moments with ``random.Random(--seed)``: K stages among ingest to tokenize,
weighted by their seconds in the largest size's run (none twice before each has been drawn once), and a
point 10-90 % into each, in pipeline order. In a fresh data folder it starts that run once per moment,
SIGKILLs every process of its session that long after the logger names the stage, then resumes it to the
end, and compares the sha256 of the files of ``tokenize/`` with the uninterrupted run's: ``train.bin`` and
``.idx``, ``validation.bin`` and ``.idx``, ``tokenizer.json``, ``meta.json`` and the token shards. Not
``_manifest.json``: the ingest manifest records the corpus path, which is inside the data folder, and every
later manifest hashes its input's (the shards it lists are compared by themselves); nor ``_stats.json``,
``_logs``, ``_work``. A kill lands when the stage named last is the one drawn and has not written its
manifest; a resumed stage is quicker than in the uninterrupted run, so a kill may come after it: the report
says where each one came. A mismatch exits non-zero.

Writes ``scale.json`` (the figures, goals, kills and each process's memory over time) and ``scale.png`` (a
panel per size: memory over time per process, coloured by role, stage starts dashed) to ``--out``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from measure import REPO_DIR, RESULTS_DIR, log, write_report

from common.faults import session_members
from common.pipeline import MANIFEST_NAME, STAGE_ORDER

SAMPLE_SECONDS = 0.5
STAGE_LOGGER = re.compile(rf" kiln\.(demo|{'|'.join(STAGE_ORDER)}): ")
PROGRESS_BAR = re.compile(r"\d+%\|.*\| *\d+/\d+ \[")
RAY_SYSTEM = ("gcs_server", "raylet", "dashboard", "log_monitor", "monitor.py", "runtime_env", "ray_client")
RAY_AGENTS = ("ray::DashboardAgent", "ray::RuntimeEnvAgent")
TOKEN_SKIPPED = ("_manifest.json", "_stats.json", "_logs", "_work")
GOAL_PROCESS_MB = 1024
GOAL_FLAT = 1.2
GOAL_LINEAR = 1.1
DEFAULT_SEED = 20240601


class StderrWatch:
    """Reads a run's stderr in a thread: the stage its logger last named, when each stage began, the last lines;
    ``named`` is set whenever a new stage is named."""

    def __init__(self, stream: Iterable[str], start: float, label: str) -> None:
        self.stage = "demo"
        self.starts: dict[str, float] = {"demo": 0.0}
        self.tail: deque[str] = deque(maxlen=25)
        self.ended = False
        self.named = threading.Event()
        self._start = start
        self._label = label
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: Iterable[str]) -> None:
        for line in stream:
            if not PROGRESS_BAR.search(line):
                self.tail.append(line.rstrip())
            match = STAGE_LOGGER.search(line)
            if match and match.group(1) != self.stage:
                with self._changed:
                    self.stage = match.group(1)
                    self.starts.setdefault(self.stage, time.perf_counter() - self._start)
                    self._changed.notify_all()
                self.named.set()
                log(f"  {self._label}: {self.stage} from {self.starts[self.stage]:.0f} s")
        with self._changed:
            self.ended = True
            self._changed.notify_all()

    def wait_for(self, stage: str) -> bool:
        """Block until the logger names ``stage`` (True) or the output ends first (False)."""
        with self._changed:
            self._changed.wait_for(lambda: stage in self.starts or self.ended)
            return stage in self.starts

    def join(self) -> None:
        """Wait for the end of the output."""
        self._thread.join()


@dataclass
class Samples:
    """What the sampler saw: per (stage, pid) the peak and the role then, the tree's peak per stage, and each
    process's (seconds, MB, role) over time."""

    peaks: dict[tuple[str, int], tuple[int, str]] = field(default_factory=dict)
    tree_peak: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    last_hwm: dict[int, int] = field(default_factory=dict)
    points: dict[int, list[tuple[float, float, str]]] = field(default_factory=lambda: defaultdict(list))


def kiln_run(docs: int, data_dir: Path) -> list[str]:
    """The command `make data DEMO_DOCS=docs` runs, into ``data_dir``, with the stage loggers on stderr."""
    return [sys.executable, "-m", "kiln", "run", "--demo", "--demo-docs", str(docs), "--data-dir", str(data_dir),
            "--verbose"]


@contextlib.contextmanager
def pipeline_run(docs: int, data_dir: Path) -> Iterator[tuple[subprocess.Popen, StderrWatch, float]]:
    """Run the pipeline on ``docs`` demo records in a session of its own: its process, stderr watch and start
    time; whatever is left of that session afterwards is killed, and its output read to the end."""
    start = time.perf_counter()
    process = subprocess.Popen(kiln_run(docs, data_dir), cwd=REPO_DIR, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True)
    watch = StderrWatch(process.stderr, start, f"{docs:,} records")
    try:
        yield process, watch, start
    finally:
        kill_session(process.pid)
        process.wait()
        watch.join()


def fail(docs: int, code: int, watch: StderrWatch) -> None:
    """End the bench on a failed run, with the last lines it wrote."""
    sys.exit(f"`kiln run --demo --demo-docs {docs}` failed (exit {code}):\n" + "\n".join(watch.tail))


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
    """``root`` and every process below it (by the parent in /proc/<pid>/stat)."""
    children: dict[int, list[int]] = defaultdict(list)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        children[parent].append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def role(pid: int, driver: int) -> str:
    """``driver``, ``ray::<task>`` for a worker (``ray::IDLE`` between tasks), ``ray-system`` for Ray's own
    processes, else the program's name."""
    if pid == driver:
        return "driver"
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "gone"
    if command.startswith(RAY_AGENTS):
        return "ray-system"
    if command.startswith("ray::IDLE") or "default_worker.py" in command:
        return "ray::IDLE"
    if command.startswith("ray::"):
        return command.split()[0]
    if any(name in command for name in RAY_SYSTEM):
        return "ray-system"
    return Path(command.split()[0]).name if command else "unknown"


def sample_once(driver: int, stage: str, seconds: float, samples: Samples) -> None:
    """Record one sample of every process of the tree below ``driver``."""
    total = 0
    for pid in descendants(driver):
        memory = status_kib(pid)
        if memory is None:
            continue
        name = role(pid, driver)
        total += memory["VmRSS"]
        peak = memory["VmRSS"]
        if memory["VmHWM"] > samples.last_hwm.get(pid, 0):
            peak = memory["VmHWM"]
        samples.last_hwm[pid] = memory["VmHWM"]
        if peak > samples.peaks.get((stage, pid), (0, ""))[0]:
            samples.peaks[(stage, pid)] = (peak, name)
        samples.points[pid].append((round(seconds, 1), round(memory["VmRSS"] / 1024, 1), name))
    samples.tree_peak[stage] = max(samples.tree_peak[stage], total)


def sample(driver: int, watch: StderrWatch, start: float, samples: Samples, stop: threading.Event) -> None:
    """Sample the tree every SAMPLE_SECONDS, and as soon as a stage is named (so each stage has a sample),
    until ``stop`` is set."""
    while not stop.is_set():
        watch.named.clear()
        sample_once(driver, watch.stage, time.perf_counter() - start, samples)
        watch.named.wait(SAMPLE_SECONDS)


def accounting(data_dir: Path, stage: str) -> dict[str, int]:
    """The documents in and out of a finished stage, from its manifest."""
    counts = json.loads((data_dir / stage / MANIFEST_NAME).read_text(encoding="utf-8"))["accounting"]
    return {"docs_in": counts["in"], "docs_out": counts["out"]}


def token_hashes(tokenize_dir: Path) -> dict[str, str]:
    """The sha256 of every output file of the tokenize stage (what TOKEN_SKIPPED names left out)."""
    hashes = {}
    for path in sorted(tokenize_dir.iterdir()):
        if path.is_file() and path.name not in TOKEN_SKIPPED:
            digest = hashlib.sha256()
            with path.open("rb") as handle:
                while chunk := handle.read(1 << 20):
                    digest.update(chunk)
            hashes[path.name] = digest.hexdigest()
    return hashes


def stage_seconds(data_dir: Path, starts: dict[str, float], start: float) -> dict[str, float]:
    """Each stage's seconds, from when the logger first named it to its manifest's mtime (demo: to ingest's
    start); ``starts`` are seconds after ``start``, a perf_counter."""
    perf_offset = time.time() - time.perf_counter()
    seconds = {}
    for stage, begin in starts.items():
        if stage == "demo":
            end = starts["ingest"]
        else:
            end = (data_dir / stage / MANIFEST_NAME).stat().st_mtime - perf_offset - start
        seconds[stage] = end - begin
    return seconds


def stage_figures(docs: int, data_dir: Path, seconds: float, stage: str, samples: Samples) -> dict:
    """One stage's time, documents and memory peaks (MB)."""
    peaks = {pid: peak for (name, pid), peak in samples.peaks.items() if name == stage}
    roles: dict[str, int] = defaultdict(int)
    for kib, name in peaks.values():
        roles[name] = max(roles[name], kib)
    largest_kib, largest_role = max(peaks.values(), default=(0, "-"))
    counts = {"docs_in": None, "docs_out": docs} if stage == "demo" else accounting(data_dir, stage)
    handled = counts["docs_out"] if stage == "demo" else counts["docs_in"]
    return {
        "seconds": round(seconds, 2),
        **counts,
        "docs_per_s": round(handled / seconds, 1),
        "driver_mb": round(roles.get("driver", 0) / 1024, 1),
        "largest_process": {"role": largest_role, "mb": round(largest_kib / 1024, 1)},
        "tree_mb": round(samples.tree_peak[stage] / 1024, 1),
        "roles_mb": {name: round(kib / 1024, 1) for name, kib in sorted(roles.items())},
    }


def thin(points: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """The points without those equal to both neighbours in MB and role (the line drawn through them is the same)."""
    last = len(points) - 1
    return [point for i, point in enumerate(points)
            if i in (0, last) or point[1:] != points[i - 1][1:] or point[1:] != points[i + 1][1:]]


def timeline(samples: Samples, starts: dict[str, float]) -> dict:
    """Each process's memory over time (``samples``: [seconds, MB]; ``roles``: [seconds, role] at each change)
    and when each stage began."""
    processes = {}
    for pid, points in sorted(samples.points.items()):
        kept = thin(points)
        changes = [[t, name] for i, (t, _, name) in enumerate(kept) if i == 0 or name != kept[i - 1][2]]
        processes[str(pid)] = {"roles": changes, "samples": [[t, mb] for t, mb, _ in kept]}
    return {"stage_starts": {stage: round(t, 1) for stage, t in starts.items()}, "processes": processes}


def measure_size(docs: int, data_dir: Path, hash_tokens: bool) -> dict:
    """Run the pipeline on ``docs`` demo records in ``data_dir``: per stage its time, documents and memory, the
    timeline, and with ``hash_tokens`` the tokenize outputs' sha256 (the reference of a kill run)."""
    samples, stop = Samples(), threading.Event()
    with pipeline_run(docs, data_dir) as (process, watch, start):
        sampler = threading.Thread(target=sample, args=(process.pid, watch, start, samples, stop), daemon=True)
        sampler.start()
        code = process.wait()
        wall = time.perf_counter() - start
        stop.set()
        sampler.join()
    if code:
        fail(docs, code, watch)
    per_stage = {stage: stage_figures(docs, data_dir, seconds, stage, samples)
                 for stage, seconds in stage_seconds(data_dir, watch.starts, start).items()}
    return {"docs": docs, "seconds": round(wall, 2), "stages": per_stage,
            "tree_peak_mb": round(max(samples.tree_peak.values()) / 1024, 1),
            "token_sha256": token_hashes(data_dir / "tokenize") if hash_tokens else None,
            "timeline": timeline(samples, watch.starts)}


def check(goal: str, value: float, limit: float, shown: str) -> dict:
    """One goal: ``value`` against ``limit`` (met when not above it); ``shown`` is how the report prints the value."""
    return {"goal": goal, "value": round(value, 3), "limit": round(limit, 3), "met": value <= limit, "shown": shown}


def goals(sizes: list[dict]) -> list[dict]:
    """The goals of the issue, checked on the smallest and largest sizes (the last two need two sizes)."""
    small, large = sizes[0], sizes[-1]
    stages = [stage for stage in STAGE_ORDER if stage in large["stages"]]
    worst_stage = max(stages, key=lambda stage: large["stages"][stage]["largest_process"]["mb"])
    worst = large["stages"][worst_stage]["largest_process"]
    found = [check(f"every process <= {GOAL_PROCESS_MB:,} MB at {large['docs']:,} records", worst["mb"],
                   GOAL_PROCESS_MB, f"largest {worst['mb']:,.0f} MB ({worst_stage}, {worst['role']})")]
    if len(sizes) < 2:
        return found
    span = f"{small['docs']:,} -> {large['docs']:,} records"
    for stage in stages:
        before, after = small["stages"][stage]["largest_process"], large["stages"][stage]["largest_process"]
        grown = after["mb"] / before["mb"]
        found.append(check(f"{stage}: largest process {span} <= {GOAL_FLAT}x", grown, GOAL_FLAT,
                           f"{grown:.2f}x ({before['mb']:,.0f} -> {after['mb']:,.0f} MB)"))
    docs_ratio = large["docs"] / small["docs"]
    for stage in stages:
        before, after = small["stages"][stage]["seconds"], large["stages"][stage]["seconds"]
        found.append(check(f"{stage}: time {span} <= {GOAL_LINEAR * docs_ratio:.3g}x ({GOAL_LINEAR} x the records' "
                           f"{docs_ratio:g}x)", after / before, GOAL_LINEAR * docs_ratio,
                           f"{after / before:.2f}x ({before:,.1f} -> {after:,.1f} s)"))
    return found


def draw_moments(seconds: dict[str, float], count: int, seed: int) -> list[tuple[str, float]]:
    """``count`` (stage, fraction of its duration) in pipeline order: distinct stages weighted by ``seconds``
    while there are some left, then any stage again, each at a fraction in (0.1, 0.9)."""
    rng = random.Random(seed)
    left, chosen = list(STAGE_ORDER), []
    while len(chosen) < count:
        pool = left or list(STAGE_ORDER)
        stage = rng.choices(pool, weights=[seconds[name] for name in pool])[0]
        if left:
            left.remove(stage)
        chosen.append(stage)
    moments = [(stage, rng.uniform(0.1, 0.9)) for stage in chosen]
    return sorted(moments, key=lambda moment: (STAGE_ORDER.index(moment[0]), moment[1]))


def kill_session(session: int) -> None:
    """SIGKILL every process of ``session`` until none is left."""
    deadline = time.monotonic() + 60
    while alive := session_members(session):
        if time.monotonic() > deadline:
            sys.exit(f"processes {alive} of the run's session are still alive after 60 s of SIGKILL")
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def kill_at(docs: int, data_dir: Path, stage: str, fraction: float, seconds: float) -> dict:
    """Run the pipeline into ``data_dir`` and SIGKILL its session ``fraction`` of ``seconds`` after the
    logger names ``stage``; where the kill landed: the stage named last (None: the run had ended) and whether
    that stage had written its manifest."""
    delay = fraction * seconds
    with pipeline_run(docs, data_dir) as (process, watch, _):
        if watch.wait_for(stage):
            time.sleep(delay)
        ended = process.poll() is not None
    if ended and process.returncode:
        fail(docs, process.returncode, watch)
    killed_in = None if ended else watch.stage
    finished = killed_in is not None and (data_dir / killed_in / MANIFEST_NAME).exists()
    return {"stage": stage, "fraction": round(fraction, 3), "seconds_in": round(delay, 2), "killed_in": killed_in,
            "killed_in_finished": finished, "landed": killed_in == stage and not finished}


def kill_outcome(moment: dict) -> str:
    """Where a kill landed, in words."""
    if moment["landed"]:
        return "landed"
    if moment["killed_in"] is None:
        return "did not land: the run had ended"
    if moment["killed_in_finished"]:
        return f"did not land: {moment['killed_in']} had finished (its manifest was written)"
    return f"did not land: the run was in {moment['killed_in']}"


def kill_and_resume(reference: dict, data_dir: Path, count: int, seed: int) -> dict:
    """Kill a run of the reference's size at ``count`` drawn moments, resume it to the end and compare its
    tokenize outputs with the reference's."""
    docs, seconds = reference["docs"], {stage: reference["stages"][stage]["seconds"] for stage in STAGE_ORDER}
    kills = []
    for stage, fraction in draw_moments(seconds, count, seed):
        log(f"  {docs:,} records: kill {stage} {fraction * seconds[stage]:.1f} s in")
        kills.append(kill_at(docs, data_dir, stage, fraction, seconds[stage]))
    log(f"  {docs:,} records: resume to the end")
    with pipeline_run(docs, data_dir) as (process, watch, start):
        code = process.wait()
        resume_seconds = time.perf_counter() - start
    if code:
        fail(docs, code, watch)
    resumed, expected = token_hashes(data_dir / "tokenize"), reference["token_sha256"]
    differing = sorted(name for name in resumed.keys() | expected.keys() if resumed.get(name) != expected.get(name))
    return {"docs": docs, "seed": seed, "kills": kills, "resume_seconds": round(resume_seconds, 2),
            "compared": sorted(expected), "differing": differing, "identical": not differing}


def show(report: dict) -> None:
    """Print a table per size, the goals and the kills."""
    for size in report["sizes"]:
        print(f"\n{size['docs']:,} demo records: {size['seconds']:.0f} s, "
              f"whole tree peak {size['tree_peak_mb']:,.0f} MB")
        print(f"  {'stage':<9} {'seconds':>8} {'docs in':>10} {'docs/s':>9} {'driver MB':>10} "
              f"{'largest process':>26} {'MB':>7} {'tree MB':>8}")
        for stage, row in size["stages"].items():
            docs_in = "-" if row["docs_in"] is None else f"{row['docs_in']:,}"
            print(f"  {stage:<9} {row['seconds']:>8.1f} {docs_in:>10} {row['docs_per_s']:>9,.0f} "
                  f"{row['driver_mb']:>10,.0f} {row['largest_process']['role']:>26} "
                  f"{row['largest_process']['mb']:>7,.0f} {row['tree_mb']:>8,.0f}")
    print("\nGoals:")
    for goal in report["goals"]:
        print(f"  {'met' if goal['met'] else 'NOT MET':<8} {goal['goal']}: {goal['shown']}")
    if len(report["sizes"]) < 2:
        print("  (memory growth and time growth per stage need two sizes)")
    if kill := report.get("kill"):
        print(f"\nKills in a {kill['docs']:,}-record run (seed {kill['seed']}):")
        for i, moment in enumerate(kill["kills"], 1):
            print(f"  {i}. {moment['stage']:<9} {moment['seconds_in']:>7.1f} s in: {kill_outcome(moment)}")
        shards = [name for name in kill["compared"] if name.startswith("part-")]
        named = ", ".join(name for name in kill["compared"] if name not in shards)
        print(f"  resumed to the end in {kill['resume_seconds']:.0f} s; compared {named} and {len(shards)} token "
              "shards")
        print("  byte-identical: " + ("yes" if kill["identical"] else "NO, differing: " + ", ".join(kill["differing"])))


def role_colours(report: dict) -> dict[str, object]:
    """A colour per role: the driver black, Ray's daemons grey, idle workers light grey, each task its own."""
    import matplotlib

    fixed = {"driver": "black", "ray-system": "grey", "ray::IDLE": "lightgrey"}
    roles = sorted({name for size in report["sizes"] for process in size["timeline"]["processes"].values()
                    for _, name in process["roles"]} - fixed.keys())
    palette = matplotlib.colormaps["tab10" if len(roles) <= 10 else "tab20"]
    return {**fixed, **{name: palette(i % palette.N) for i, name in enumerate(roles)}}


def role_segments(process: dict) -> Iterator[tuple[str, list[float], list[float]]]:
    """A process's samples split where its role changes, each segment starting from the previous one's last point
    (the line up to a sample takes the colour of the role at that sample)."""
    changes = process["roles"]
    segments: list[tuple[str, list[list[float]]]] = []
    for t, mb in process["samples"]:
        name = next(name for begin, name in reversed(changes) if begin <= t)
        if not segments or segments[-1][0] != name:
            segments.append((name, segments[-1][1][-1:] if segments else []))
        segments[-1][1].append([t, mb])
    for name, points in segments:
        yield name, [t for t, _ in points], [mb for _, mb in points]


def plot(report: dict, path: Path) -> Path:
    """Draw each size's memory over time per process (one panel a size) to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = role_colours(report)
    sizes = report["sizes"]
    figure, axes = plt.subplots(len(sizes), 1, figsize=(13, 4.5 * len(sizes)), squeeze=False)
    for ax, size in zip(axes[:, 0], sizes, strict=True):
        drawn = set()
        for process in size["timeline"]["processes"].values():
            for name, times, mbs in role_segments(process):
                ax.plot(times, mbs, color=colours[name], linewidth=1, label=None if name in drawn else name)
                drawn.add(name)
        for i, (stage, t) in enumerate(size["timeline"]["stage_starts"].items()):
            ax.axvline(t, color="dimgrey", linestyle="--", linewidth=0.8)
            ax.text(t, 1.01 + 0.05 * (i % 2), stage, transform=ax.get_xaxis_transform(), fontsize=8, va="bottom")
        ax.axhline(GOAL_PROCESS_MB, color="red", linewidth=0.8)
        ax.text(0, GOAL_PROCESS_MB, "1 GB goal", color="red", fontsize=8, va="bottom")
        ax.set_title(f"{size['docs']:,} demo records", pad=30)
        ax.set_xlabel("seconds")
        ax.set_ylabel("RSS MB")
        ax.set_ylim(bottom=0)
        handles, labels = ax.get_legend_handles_labels()
        order = sorted(range(len(labels)), key=lambda i: labels[i])
        ax.legend([handles[i] for i in order], [labels[i] for i in order], fontsize=7, loc="upper left",
                  bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def parse_sizes(text: str) -> list[int]:
    """The comma-separated sizes, ascending and without repeats."""
    return sorted({int(part) for part in text.split(",")})


@contextlib.contextmanager
def run_dir(keep: Path | None, name: str) -> Iterator[Path]:
    """``keep/name`` (refused when it already holds something), else a temporary folder removed afterwards."""
    if keep is None:
        with tempfile.TemporaryDirectory(prefix=f"kiln-scale-{name}-") as folder:
            yield Path(folder)
        return
    folder = keep / name
    if folder.exists() and any(folder.iterdir()):
        sys.exit(f"{folder} already holds a run: remove it or choose another --keep")
    yield folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=parse_sizes, default="100000,1000000", metavar="N,N",
                        help="comma-separated demo corpus sizes (default 100000,1000000)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="run in DIR/<size> (and DIR/<size>-kill) and keep the data there (default: temporary "
                             "folders, removed)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, metavar="DIR",
                        help="folder for scale.json and scale.png (default bench/results)")
    parser.add_argument("--kill", type=int, default=0, metavar="K",
                        help="SIGKILL the largest size's run at K moments, resume it and compare its tokens "
                             "(default 0)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="S",
                        help=f"seed of the kill moments (default {DEFAULT_SEED})")
    args = parser.parse_args()
    sizes = []
    for docs in args.docs:
        log(f"kiln run --demo --demo-docs {docs:,}")
        with run_dir(args.keep, str(docs)) as data_dir:
            sizes.append(measure_size(docs, data_dir, hash_tokens=args.kill > 0 and docs == args.docs[-1]))
    report = {"sizes": sizes, "goals": goals(sizes)}
    if args.kill > 0:
        log(f"{args.kill} kills in kiln run --demo --demo-docs {sizes[-1]['docs']:,}")
        with run_dir(args.keep, f"{sizes[-1]['docs']}-kill") as data_dir:
            report["kill"] = kill_and_resume(sizes[-1], data_dir, args.kill, args.seed)
    show(report)
    print(f"\nFigures written to {write_report(args.out, 'scale.json', report)}")
    print(f"Plot written to {plot(report, args.out / 'scale.png')}")
    if "kill" in report and not report["kill"]["identical"]:
        sys.exit("the resumed run's token files differ from the uninterrupted run's")


if __name__ == "__main__":
    main()
