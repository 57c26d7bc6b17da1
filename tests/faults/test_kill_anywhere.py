"""Kill anywhere: every data stage SIGKILLed (with every process of its run) at seeded moments of its run,
then rerun (the same command line in this process, on the session's Ray): the output is byte-identical to the
uninterrupted run, the accounting balances, and nothing partial was ever visible as output.

The moments are drawn uniformly over the stage's own uninterrupted wall time (Ray's start, planning, the
work units, dedup's distributed steps, BPE training, packing and the manifest all fall in it) from a seed:
``KILN_FAULT_SEED=<n>`` replays a failing draw; the test's id names the stage and the kill's time.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from common.faults import session_members
from common.manifest import require_manifest
from common.pipeline import STAGE_ORDER
from tests.conftest import REPO, child_env, cli
from tests.resume_helpers import output_files

pytestmark = pytest.mark.slow

DEMO_DOCS = "1500"
KILLS_PER_STAGE = 5
SEED = int(os.environ.get("KILN_FAULT_SEED", "20261202"))


def _stage_command(stage: str, data: Path) -> list[str]:
    """The stage's command on ``data``; ingest reads the demo corpus under it."""
    command = [sys.executable, "-m", f"stages.{stage}", "--data-dir", str(data), "--set", "ray.num_cpus=2"]
    return [*command, "--input", str(data / "demo" / "corpus")] if stage == "ingest" else command


def _run_and_kill(stage: str, data: Path, after: float, log: Path) -> bool:
    """Run ``stage`` in a session of its own and SIGKILL the whole session ``after`` seconds in; return
    whether it was still running then (a kill that came too late lets it finish)."""
    with log.open("w") as err:
        process = subprocess.Popen(_stage_command(stage, data), cwd=REPO, env=child_env(), stdout=subprocess.DEVNULL,
                                   stderr=err, start_new_session=True)
        try:
            process.wait(timeout=after)
            return False
        except subprocess.TimeoutExpired:
            pass
        finally:
            for pid in [process.pid, *session_members(process.pid)]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            process.wait()
    deadline = time.monotonic() + 30
    while session_members(process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return True


def _assert_nothing_partial_is_visible(stage_dir: Path) -> None:
    """Every Arrow file a reader can see opens whole; a manifest, when there, lists files that all exist."""
    for path in stage_dir.rglob("*.arrow"):
        if not path.name.startswith(".") and "_work" not in path.parts:
            with pa.memory_map(str(path)) as source:
                pa.ipc.open_file(source).read_all()
    if (stage_dir / "_manifest.json").exists():
        manifest = require_manifest(stage_dir)
        for info in [*manifest.shards, *(i for infos in manifest.outputs.values() for i in infos)]:
            assert (stage_dir / info.path).stat().st_size == info.bytes


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, dict[str, dict[str, bytes]], dict[str, float]]:
    """The uninterrupted run, stage by stage, in the folder every kill reuses (manifests record input
    paths); returns it, each stage's files and each stage command's wall time."""
    data = tmp_path_factory.mktemp("kill-anywhere") / "data"
    cli("-m", "kiln", "demo", str(data / "demo"), "--docs", DEMO_DOCS)
    seconds = {}
    for stage in STAGE_ORDER:
        start = time.monotonic()
        subprocess.run(_stage_command(stage, data), cwd=REPO, env=child_env(), check=True, capture_output=True,
                       timeout=900)
        seconds[stage] = time.monotonic() - start
    return data, {stage: output_files(data / stage) for stage in STAGE_ORDER}, seconds


def _draws() -> list[tuple[str, float]]:
    rng = random.Random(SEED)
    return [(stage, rng.uniform(0.05, 0.85)) for stage in STAGE_ORDER for _ in range(KILLS_PER_STAGE)]


@pytest.mark.parametrize(("stage", "share"), _draws(), ids=[f"{s}-at-{share:.0%}" for s, share in _draws()])
def test_a_stage_killed_at_a_seeded_moment_reruns_byte_identical(reference, tmp_path: Path, stage: str, share: float,
                                                                  in_process):
    data, files, seconds = reference
    stage_dir = data / stage
    shutil.rmtree(stage_dir)
    killed = _run_and_kill(stage, data, share * seconds[stage], tmp_path / "killed.log")
    assert killed, f"{stage} finished within {share * seconds[stage]:.1f} s: the kill came too late"
    _assert_nothing_partial_is_visible(stage_dir)
    in_process(*_stage_command(stage, data)[1:])  # the same command line, on this process's Ray
    got = output_files(stage_dir)
    assert sorted(got) == sorted(files[stage])
    assert [name for name in got if got[name] != files[stage][name]] == []
    assert not list(stage_dir.rglob(".*.tmp-*"))
    accounting = require_manifest(stage_dir).accounting
    assert accounting.docs_in == accounting.docs_out + sum(accounting.dropped.values())
