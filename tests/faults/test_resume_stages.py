"""Kill a stage at a named point of its run (common/faults.py), rerun it, and get the uninterrupted bytes.

Its helpers (tests/resume_helpers.py) are shared with the other kill tests (ingest, clean, dedup's
signature step, tokenize). The uninterrupted runs are the shared 4,000-document demo run.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common.faults import FAULT_ENV, session_members
from common.manifest import require_manifest
from tests.conftest import REPO, child_env
from tests.resume_helpers import assert_same_output, resume_stage, run_to_fault, units_done
from tests.test_pipeline_demo import shared_demo_run

pytestmark = pytest.mark.slow

SKIPPED = ("_work", "_logs", "_stats.json")  # resume state, logs and wall times: not part of the output



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
    for pid in session_members(session):
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
        for pid in session_members(proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert survivors == {}, f"still running after the kill (pid: process group): {survivors}"
