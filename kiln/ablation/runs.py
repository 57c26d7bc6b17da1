"""The training and evaluation processes of an ablation: one trainer run per (arm, seed) in the trainer's own
environment, each followed by the evaluator on the validation split (and multiple choice), each leaving
``result.json`` when done so that a rerun skips it and a killed one resumes from its last checkpoint."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from common.errors import KilnError
from common.files import atomic_write_json
from kiln.ablation.layout import RESULT_FILE
from stages.train.metrics import EVAL_NAME

TRAIN_LOG, EVAL_LOG, EVAL_REPORT = "train.log", "eval.log", "eval-report.json"
LOG_TAIL_LINES = 15


@dataclass(frozen=True)
class RunPlan:
    """One training run: its arm and seed, where it writes, what it trains and is evaluated on, how."""

    arm: str
    seed: int
    run_dir: Path
    train_bin: Path
    heldout_bin: Path
    heldout_tokens: int
    validation_bin: Path | None
    mc_files: tuple[Path, ...]
    overrides: tuple[str, ...]
    config_sha256: str
    threads: int

    @property
    def label(self) -> str:
        """How progress lines name the run."""
        return f"{self.arm} seed {self.seed}"

    def identity(self) -> dict:
        """What a finished run must match to be reused."""
        return {"train_bin": str(self.train_bin), "overrides": list(self.overrides), "config": self.config_sha256,
                "validation": str(self.validation_bin), "mc": [str(f) for f in self.mc_files]}


def read_result(plan: RunPlan) -> dict | None:
    """The run's result when it finished with this plan's settings, else None."""
    path = plan.run_dir / RESULT_FILE
    if not path.is_file():
        return None
    result = json.loads(path.read_text())
    return result if result.get("identity") == plan.identity() else None


def read_curve(run_dir: Path) -> list[dict]:
    """The held-out evaluations of a run's eval.jsonl, one per step (a resumed run's repeat of a step replaced)."""
    by_step: dict[int, dict] = {}
    path = run_dir / EVAL_NAME
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                by_step[int(row["step"])] = {"step": int(row["step"]), "loss": float(row["val_loss"]),
                                             "tokens": int(row["val_tokens"])}
    return [by_step[s] for s in sorted(by_step)]


def _run_logged(command: list[str], log: Path, what: str, output: Path | None = None) -> None:
    """Run ``command`` with its stderr (and its stdout, unless ``output`` takes it) appended to ``log``."""
    with log.open("a", encoding="utf-8") as sink, \
            (output.open("w", encoding="utf-8") if output else contextlib.nullcontext(sink)) as out:
        sink.write(f"$ {' '.join(command)}\n")
        sink.flush()
        code = subprocess.run(command, stdout=out, stderr=sink, check=False).returncode
    if code:
        tail = "\n    ".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-LOG_TAIL_LINES:])
        raise KilnError(f"{what} failed (exit {code}); the end of {log}:\n    {tail}")


def _evaluate(plan: RunPlan, python: Path) -> dict | None:
    """The evaluator's report on the validation split and the multiple-choice files, or None without either."""
    if plan.validation_bin is None and not plan.mc_files:
        return None
    report_path = plan.run_dir / EVAL_REPORT
    command = [str(python), "-m", "stages.eval", "--checkpoint", str(plan.run_dir), "--json", "--prompt",
               "--threads", str(plan.threads), "--mc", *map(str, plan.mc_files)]
    if plan.validation_bin is not None:
        command += ["--tokens", str(plan.validation_bin)]
    _run_logged(command, plan.run_dir / EVAL_LOG, f"evaluating {plan.label}", output=report_path)
    try:
        return json.loads(report_path.read_text())
    except ValueError as err:
        raise KilnError(f"{report_path}: the evaluator of {plan.label} printed no JSON report ({err})") from None


def run_one(plan: RunPlan, python: Path, train_config: Path) -> dict:
    """Train (or resume) one run, evaluate its last checkpoint, and write its result.json; a finished run with the
    same settings is read back, one with other settings is trained again from scratch."""
    if (done := read_result(plan)) is not None:
        return done
    if (plan.run_dir / RESULT_FILE).is_file():
        shutil.rmtree(plan.run_dir)
    plan.run_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    _run_logged([str(python), "-m", "stages.train", "--tokens", str(plan.train_bin), "--validation",
                 str(plan.heldout_bin), "--config", str(train_config), "--run-dir", str(plan.run_dir),
                 *(f"--set={o}" for o in (*plan.overrides, f"train.threads={plan.threads}"))],
                plan.run_dir / TRAIN_LOG, f"training {plan.label}")
    report = _evaluate(plan, python)
    curve = read_curve(plan.run_dir)
    if not curve:
        raise KilnError(f"{plan.run_dir / EVAL_NAME}: the run of {plan.label} logged no held-out evaluation")
    if curve[-1]["tokens"] != plan.heldout_tokens:
        raise KilnError(f"{plan.run_dir / EVAL_NAME}: the last evaluation of {plan.label} read "
                        f"{curve[-1]['tokens']:,} tokens of the held-out set, not all {plan.heldout_tokens:,}")
    result = {
        "arm": plan.arm, "seed": plan.seed, "identity": plan.identity(), "curve": curve,
        "heldout_loss": curve[-1]["loss"], "steps": curve[-1]["step"],
        "validation_loss": (report.get("perplexity") or {}).get("loss") if report else None,
        "multiple_choice": (report.get("multiple_choice") or {}).get("overall") if report else None,
        "seconds": round(time.perf_counter() - start, 1),
    }
    atomic_write_json(plan.run_dir / RESULT_FILE, result)
    return result


def run_all(plans: list[RunPlan], python: Path, train_config: Path, jobs: int,
            say: Callable[[str], None]) -> list[dict]:
    """Every plan, ``jobs`` at a time, with a progress line per run; results in plan order. The first failure
    (or Ctrl-C) cancels the runs not started yet."""
    total = len(plans)
    finished = sum(read_result(p) is not None for p in plans)
    if finished:
        say(f"{finished} of {total} runs already done: reusing their results")
    lock = threading.Lock()
    seconds: list[float] = []  # of the runs trained here

    def one(plan: RunPlan) -> dict:
        fresh = read_result(plan) is None
        if fresh:
            say(f"training {plan.label} ...")
        result = run_one(plan, python, train_config)
        if fresh:
            with lock:
                seconds.append(result["seconds"])
                count, left, mean = finished + len(seconds), total - finished - len(seconds), sum(seconds) / len(seconds)
            say(f"[{count}/{total}] {plan.label}: held-out loss {result['heldout_loss']:.4f} after "
                f"{result['steps']} steps in {result['seconds']:.0f} s"
                + (f"; about {mean * left / min(jobs, left):.0f} s left" if left else ""))
        return result

    pool = ThreadPoolExecutor(max_workers=jobs)
    futures: list[Future] = []
    try:
        futures = [pool.submit(one, plan) for plan in plans]
        wait(futures, return_when=FIRST_EXCEPTION)
        for future in futures:
            if future.done() and future.exception() is not None:
                raise future.exception()
        return [future.result() for future in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
