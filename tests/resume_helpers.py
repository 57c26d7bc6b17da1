"""Kill a stage at a fault point, resume it and compare its output with a fresh run's: the helpers of every
resume test (these, the CLI tests, the fault suite)."""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common.faults import FAULT_ENV, session_members
from common.runner import run_stage
from tests.conftest import REPO, child_env, make_config

pytestmark = pytest.mark.slow

SKIPPED = ("_work", "_logs", "_stats.json")  # resume state, logs and wall times: not part of the output


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
            for pid in session_members(proc.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 30
    while session_members(proc.pid) and time.monotonic() < deadline:
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
