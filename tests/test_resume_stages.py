"""Kill a stage at a named point of its run (common/faults.py), rerun it, and get the uninterrupted bytes.

``run_to_fault`` and ``assert_same_output`` are shared with the other kill tests (ingest, clean,
dedup's signature step, tokenize). The uninterrupted runs are the shared 4,000-document demo run.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common.faults import FAULT_ENV
from common.manifest import require_manifest
from common.runner import run_stage
from tests.conftest import REPO, child_env, make_config
from tests.test_pipeline_demo import shared_demo_run

pytestmark = pytest.mark.slow

SKIPPED = ("_work", "_logs", "_stats.json")  # resume state, logs and wall times: not part of the output


def session_survivors(session: int) -> list[int]:
    """Processes of the session ``session`` (a run started with start_new_session) that are still running."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, *fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == session and state not in ("Z", "X"):  # fields: ppid, pgrp, session, ...
            alive.append(int(entry.name))
    return alive


def run_to_fault(args: list[str], fault: str, log: Path, timeout: float = 300) -> None:
    """Run ``python <args>`` with ``KILN_FAULT=<fault>`` in a session of its own, check that the fault killed
    it, then SIGKILL what is left of that session. Its stderr goes to ``log``.

    The fault kills the whole session; what might be left of it is killed here too, so that a broken hook
    cannot let a unit commit after the kill unnoticed (test_a_fault_kills_every_process_of_the_run checks
    the hook alone).
    """
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, *args], cwd=REPO, env=child_env(**{FAULT_ENV: fault}),
                                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        try:
            returncode = proc.wait(timeout=timeout)
        finally:
            for pid in session_survivors(proc.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 30
    while session_survivors(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert returncode == -signal.SIGKILL, (
        f"{args} with {FAULT_ENV}={fault} exited {returncode} instead of being killed:\n{log.read_text()[-3000:]}")


def output_files(stage_dir: Path) -> dict[str, bytes]:
    """Every output file of a finished stage (shards, exclusions, extra outputs, manifest) by relative path."""
    files = {}
    for path in sorted(stage_dir.rglob("*")):
        rel = path.relative_to(stage_dir)
        if path.is_file() and rel.parts[0] not in SKIPPED:
            files[rel.as_posix()] = path.read_bytes()
    return files


def assert_same_output(resumed: Path, fresh: Path) -> None:
    """The resumed stage holds exactly the uninterrupted stage's files, byte for byte, and no temporaries."""
    got, expected = output_files(resumed), output_files(fresh)
    assert "_manifest.json" in expected and any(name.endswith(".arrow") for name in expected)
    assert sorted(got) == sorted(expected)
    assert [name for name in expected if got[name] != expected[name]] == []
    assert not list(resumed.rglob(".*.tmp-*"))


def units_done(stage_dir: Path) -> int:
    return len(list((stage_dir / "_work").glob("unit-*.json")))


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def resume_stage(stage: str, data_dir: Path, *overrides: str) -> str:
    """Rerun a stage in this process and return what it logged, one message a line. The caller requests the
    ``ray_local`` fixture: the session's Ray is already up, which saves a Ray start per test."""
    log = logging.getLogger(f"kiln.test.resume.{stage}")
    log.setLevel(logging.INFO)
    handler = _Lines()
    log.addHandler(handler)
    try:
        run_stage(importlib.import_module(f"stages.{stage}.stage").STAGE, make_config(*overrides), data_dir,
                  force=False, log=log)
    finally:
        log.removeHandler(handler)
    return "\n".join(handler.lines)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return shared_demo_run(tmp_path_factory)[0]


def _stage(stage: str, data: Path, *extra: str) -> list[str]:
    return ["-m", f"stages.{stage}", "--data-dir", str(data), "--set", "ray.num_cpus=1", *extra]


# --- mix ----------------------------------------------------------------------------------------------------


def test_mix_killed_after_its_second_unit_resumes_byte_identical(demo: Path, tmp_path: Path, ray_local):
    shutil.copytree(demo / "dedup", tmp_path / "dedup")
    units = len(require_manifest(demo / "dedup").shards)
    run_to_fault(_stage("mix", tmp_path), "mix.unit.done:2", tmp_path / "killed.log")
    mix = tmp_path / "mix"
    assert not (mix / "_manifest.json").exists() and not (mix / "mix_summary.json").exists()
    done = units_done(mix)
    # One Ray CPU runs one unit at a time: the kill lands right after the driver sees the 2nd result, while
    # the 3rd unit (tens of milliseconds of work) may already have finished: 2, rarely 3.
    assert done in (2, 3), done
    resumed = resume_stage("mix", tmp_path)
    assert f"resuming mix: {done} of {units} units already done" in resumed
    assert_same_output(mix, demo / "mix")


def test_mix_killed_before_its_manifest_resumes_byte_identical(demo: Path, tmp_path: Path, ray_local):
    shutil.copytree(demo / "dedup", tmp_path / "dedup")
    units = len(require_manifest(demo / "dedup").shards)
    run_to_fault(_stage("mix", tmp_path), "mix.manifest:1", tmp_path / "killed.log")
    mix = tmp_path / "mix"
    assert units_done(mix) == units and not (mix / "_manifest.json").exists()
    resumed = resume_stage("mix", tmp_path)
    assert f"resuming mix: {units} of {units} units already done" in resumed
    assert_same_output(mix, demo / "mix")


# --- dedup: the LSH partition step and the decision step ----------------------------------------------------


@pytest.mark.parametrize(("point", "step", "done"), [
    ("dedup.partition.done:3", "lsh", "done-*.json"),
    ("dedup.small_star.done:5", "graph/r-000", "small-*.json"),
    ("dedup.keepers.done:2", "members", "kept-*.json"),
])
def test_dedup_killed_in_a_distributed_step_resumes_byte_identical(demo: Path, tmp_path: Path, ray_local,
                                                                   point: str, step: str, done: str):
    shutil.copytree(demo / "clean", tmp_path / "clean")
    shards = len(require_manifest(demo / "clean").shards)
    partitions = require_manifest(demo / "dedup").config["partitions"]
    run_to_fault(_stage("dedup", tmp_path), point, tmp_path / "killed.log")
    work = tmp_path / "dedup" / "_work"
    assert len(list((work / "signatures").glob("s-*.npz"))) == shards
    finished = len(list((work / step).glob(done)))
    # one task at a time (one Ray CPU): the n-th result killed the run, the next task may have ended
    n = int(point.rsplit(":", 1)[1])
    assert finished in (n, n + 1) and finished < partitions, finished
    assert not (work / "decided.json").exists() and units_done(tmp_path / "dedup") == 0
    resumed = resume_stage("dedup", tmp_path)
    assert f"dedup: reusing {shards} of {shards} signature files" in resumed
    assert_same_output(tmp_path / "dedup", demo / "dedup")


def test_dedup_killed_before_saving_its_decisions_resumes_byte_identical(demo: Path, tmp_path: Path, ray_local):
    shutil.copytree(demo / "clean", tmp_path / "clean")
    shards = len(require_manifest(demo / "clean").shards)
    partitions = require_manifest(demo / "dedup").config["partitions"]
    run_to_fault(_stage("dedup", tmp_path), "dedup.decisions:1", tmp_path / "killed.log")
    work = tmp_path / "dedup" / "_work"
    assert len(list((work / "signatures").glob("s-*.npz"))) == shards
    assert len(list((work / "members").glob("kept-*.json"))) == partitions
    assert not (work / "decided.json").exists() and units_done(tmp_path / "dedup") == 0
    resumed = resume_stage("dedup", tmp_path)
    assert f"dedup: reusing {shards} of {shards} signature files" in resumed
    found = re.search(r"dedup: \d+ documents, \d+ verified near-duplicate edges", resumed)
    assert found, "the resumed run sums the saved decisions again"
    assert_same_output(tmp_path / "dedup", demo / "dedup")



# --- the fault hook itself ----------------------------------------------------------------------------------


def _process_groups(session: int) -> dict[int, int]:
    """pid -> process group of every still running process of the session."""
    groups = {}
    for pid in session_survivors(session):
        with contextlib.suppress(OSError):
            groups[pid] = os.getpgid(pid)
    return groups


def test_a_fault_kills_every_process_of_the_run(tmp_path: Path):
    (tmp_path / "in.jsonl").write_text('{"text": "one document"}\n')
    args = ["-m", "stages.ingest", "--input", str(tmp_path / "in.jsonl"), "--data-dir", str(tmp_path / "data"),
            "--set", "ray.num_cpus=1"]
    proc = subprocess.Popen([sys.executable, *args], cwd=REPO, env=child_env(**{FAULT_ENV: "ingest.unit.done:1"}),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert proc.wait(timeout=300) == -signal.SIGKILL
        deadline = time.monotonic() + 10  # what the signal reached dies within moments
        while proc.pid in _process_groups(proc.pid).values() and time.monotonic() < deadline:
            time.sleep(0.01)
        survivors = _process_groups(proc.pid)
    finally:
        for pid in session_survivors(proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert survivors == {}, f"still running after the kill (pid: process group): {survivors}"
