"""The clean stage through its command line: resume after a kill, refusals, clear errors. Only the killed run
starts a process of its own; the others parse the same command line in this process (``in_process``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from common.manifest import require_manifest
from tests.conftest import cli, run_in_process
from tests.resume_helpers import assert_same_output, run_to_fault

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, ray_local) -> Path:
    """A data dir holding the ingest of a 4,000-record demo corpus split into many shards."""
    data = tmp_path_factory.mktemp("clean-cli")
    run_in_process("-m", "kiln", "demo", str(data / "demo"), "--docs", "4000")
    run_in_process("-m", "stages.ingest", "--input", str(data / "demo" / "corpus"), "--data-dir", str(data),
                   "--set", "ingest.shard_max_bytes=300000")
    return data


def _copy_ingest(ingested: Path, target: Path) -> Path:
    shutil.copytree(ingested / "ingest", target / "ingest")
    return target


def _clean(data: Path, *extra: str, check: bool = True) -> subprocess.CompletedProcess:
    """`python -m stages.clean --data-dir <data> <extra>`, in this process."""
    return run_in_process("-m", "stages.clean", "--data-dir", str(data), *extra, check=check)


def test_sigkill_then_resume_is_byte_identical(ingested: Path, tmp_path: Path):
    units = len(require_manifest(ingested / "ingest").shards)
    assert units >= 8
    killed = _copy_ingest(ingested, tmp_path / "killed")
    run_to_fault(["-m", "stages.clean", "--data-dir", str(killed), "--set", "ray.num_cpus=1"], "clean.unit.done:2",
                 tmp_path / "killed.log")
    assert not (killed / "clean" / "_manifest.json").exists()
    # One Ray CPU runs one unit at a time and the kill follows the driver's 2nd result within milliseconds,
    # while a unit (language ID and signals of ~300 KB of text) takes far longer: exactly 2 units are done.
    assert len(list((killed / "clean" / "_work").glob("unit-*.json"))) == 2
    resumed = _clean(killed)
    assert f"resuming clean: 2 of {units} units already done" in resumed.stderr
    fresh = _copy_ingest(ingested, tmp_path / "fresh")
    _clean(fresh)
    assert_same_output(killed / "clean", fresh / "clean")


def test_missing_input_stage_is_a_clear_error(tmp_path: Path):
    result = cli("-m", "stages.clean", "--data-dir", str(tmp_path), check=False)
    assert result.returncode == 2
    assert "ingest does not exist" in result.stderr and "python -m stages.ingest" in result.stderr
    assert "Traceback" not in result.stderr


def test_tampered_input_shard_is_refused(ingested: Path, tmp_path: Path):
    data = _copy_ingest(ingested, tmp_path)
    shard = data / "ingest" / require_manifest(data / "ingest").shards[3].path
    blob = bytearray(shard.read_bytes())
    blob[len(blob) // 2] ^= 0x40
    shard.write_bytes(bytes(blob))
    result = _clean(data, check=False)
    assert result.returncode == 2
    assert shard.name in result.stderr and "does not match the manifest" in result.stderr
    assert not (data / "clean" / "_manifest.json").exists()


def test_bad_rule_and_model_settings_are_named(ingested: Path, tmp_path: Path):
    data = _copy_ingest(ingested, tmp_path)
    unknown = cli("-m", "stages.clean", "--data-dir", str(data), "--set", "clean.rules.too_short.signal=q_nothing",
                  check=False)
    assert unknown.returncode == 2 and "clean.rules.too_short.signal: unknown signal 'q_nothing'" in unknown.stderr
    assert "--set clean.rules.too_short.signal=q_nothing" in unknown.stderr and "Ray" not in unknown.stderr
    model = _clean(data, "--force", "--set", f"clean.lid.model_path={tmp_path / 'lid.bin'}", check=False)
    assert model.returncode == 2 and "language ID model not found" in model.stderr
    assert "Traceback" not in unknown.stderr + model.stderr
