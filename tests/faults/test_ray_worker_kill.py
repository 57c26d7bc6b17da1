"""A Ray worker killed in the middle of a stage on a multi-node cluster (a head and a node of two workers):
Ray retries its task on another worker, the stage finishes, and its output is byte-identical to local
mode: nothing lost, nothing twice."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common.manifest import require_manifest
from kiln.ray_nodes import RayNodes
from tests.conftest import REPO, child_env, cli
from tests.resume_helpers import output_files

pytestmark = pytest.mark.slow

DEMO_DOCS = "1500"
STAGES = ("ingest", "clean")


def _unit_workers(token: str) -> list[int]:
    """Workers of the cluster whose auth token is ``token`` running a work unit now (process title
    ``ray::_run_unit``); another Ray on the machine is never touched."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(b"ray::_run_unit") and \
                        f"RAY_AUTH_TOKEN={token}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _kill_one_unit_worker(process: subprocess.Popen, started: Path, token: str, deadline: float) -> int:
    """Once the clean stage has started, SIGKILL one of the cluster's workers running a clean unit; return its pid."""
    while time.monotonic() < deadline and process.poll() is None:
        if started.exists() and (workers := _unit_workers(token)):
            os.kill(workers[0], signal.SIGKILL)
            return workers[0]
        time.sleep(0.05)
    raise AssertionError("the clean stage ended before a worker could be killed")


def _clean_with_a_kill(run_dir: Path, env: dict[str, str], log: Path,
                       *extra: str) -> tuple[subprocess.CompletedProcess, int]:
    """Run the clean stage, SIGKILL one of its unit workers once it runs, and return how it ended."""
    with log.open("w") as sink:
        process = subprocess.Popen([sys.executable, "-m", "stages.clean", "--data-dir", str(run_dir), *extra],
                                   cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=sink, text=True)
        killed = _kill_one_unit_worker(process, run_dir / "clean" / "_work" / "_state.json", env["RAY_AUTH_TOKEN"],
                                       time.monotonic() + 300)
        code = process.wait(timeout=600)
    return subprocess.CompletedProcess(process.args, code, "", log.read_text()), killed


def test_a_worker_killed_mid_stage_is_retried_and_the_output_is_byte_identical(tmp_path: Path,
                                                                                no_ray_in_this_process):
    """Without retries the stage stops with a message and keeps its finished units; with them (the default)
    the rerun finishes despite another kill."""
    run_dir = tmp_path / "run"  # both runs use the same root: manifests record their input paths
    cli("-m", "kiln", "demo", str(run_dir / "demo"), "--docs", DEMO_DOCS)
    cli("-m", "stages.ingest", "--input", str(run_dir / "demo" / "corpus"), "--data-dir", str(run_dir),
        "--set", "ingest.shard_max_bytes=65536", timeout=600)  # small shards: many clean units to kill one of
    cli("-m", "stages.clean", "--data-dir", str(run_dir), timeout=600)
    local = {stage: output_files(run_dir / stage) for stage in STAGES}
    clean_dir = run_dir / "clean"
    subprocess.run(["rm", "-rf", str(clean_dir)], check=True)
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32), "RAY_USAGE_STATS_ENABLED": "0"}
    with RayNodes(child_env(**auth)) as nodes:
        nodes.start_head(num_cpus=0)
        nodes.add_worker(num_cpus=2, resources='{"clean": 2}')  # two workers: a killed one's task goes to the other
        nodes.wait_for_nodes(2)
        env = child_env(RAY_ADDRESS=nodes.address, **auth)
        no_retry, _ = _clean_with_a_kill(run_dir, env, tmp_path / "no-retry.log", "--set", "ray.task_retries=0")
        assert no_retry.returncode == 2 and "Traceback" not in no_retry.stderr, no_retry.stderr[-3000:]
        assert "was lost 1 times (ray.task_retries=0)" in no_retry.stderr and "rerun to go on" in no_retry.stderr
        retried, killed = _clean_with_a_kill(run_dir, env, tmp_path / "retried.log")
        assert retried.returncode == 0, retried.stderr[-3000:]
    assert killed not in _unit_workers(auth["RAY_AUTH_TOKEN"])
    assert output_files(clean_dir) == local["clean"]
    accounting = require_manifest(clean_dir).accounting
    assert accounting.docs_in == require_manifest(run_dir / "ingest").accounting.docs_out
    assert not list(clean_dir.rglob(".*.tmp-*"))
