"""Ingest through its real command line: kill and resume, config changes, clear errors, status."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common.manifest import require_manifest
from common.shards import ShardChecksumError, read_shard
from tests.conftest import REPO, cli

pytestmark = pytest.mark.slow

WORDS = ["river", "mountain", "河流", "山脉", "city", "城市", "data", "数据", "model", "模型", "paper", "论文", "news", "新闻"]


def _write_inputs(folder: Path, files: int = 10, rows: int = 15000) -> Path:
    folder.mkdir(parents=True)
    rng = random.Random(7)
    for f in range(files):
        lines = "".join(
            json.dumps({"id": f"{f}-{i}", "text": " ".join(rng.choices(WORDS, k=40))}, ensure_ascii=False) + "\n"
            for i in range(rows)
        ).encode()
        name = folder / (f"part{f:02d}.jsonl.gz" if f % 2 else f"part{f:02d}.jsonl")
        name.write_bytes(gzip.compress(lines, mtime=0) if f % 2 else lines)
    return folder


def _digest(stage_dir: Path) -> dict[str, bytes]:
    names = ["_manifest.json", *sorted(p.name for p in stage_dir.glob("part-*.arrow"))]
    return {name: (stage_dir / name).read_bytes() for name in names}


def _ingest(data_dir: Path, inputs: Path, *extra: str, check: bool = True) -> subprocess.CompletedProcess:
    return cli("-m", "stages.ingest", "--input", str(inputs), "--data-dir", str(data_dir),
               "--set", "ray.num_cpus=1", *extra, check=check)


def test_sigkill_then_resume_is_byte_identical(tmp_path: Path):
    inputs = _write_inputs(tmp_path / "raw")
    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "stages.ingest", "--input", str(inputs), "--data-dir", str(killed),
         "--set", "ray.num_cpus=1"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((killed / "ingest" / "_work").glob("unit-*.json"))) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and the Ray processes it started
    proc.wait()
    assert not (killed / "ingest" / "_manifest.json").exists()

    resumed = _ingest(killed, inputs)
    found = re.search(r"resuming ingest: (\d+) of 10 units already done", resumed.stderr)
    assert found and 2 <= int(found.group(1)) < 10, "the kill must land while the stage is working"
    _ingest(tmp_path / "clean", inputs)
    assert _digest(killed / "ingest") == _digest(tmp_path / "clean" / "ingest")
    assert not list((killed / "ingest").rglob(".*.tmp-*"))


def test_changed_config_needs_force(tmp_path: Path):
    inputs = _write_inputs(tmp_path / "raw", files=2, rows=200)
    data = tmp_path / "data"
    _ingest(data, inputs)
    again = _ingest(data, inputs)
    assert "already done with this configuration" in again.stderr
    refused = _ingest(data, inputs, "--set", "ingest.batch_rows=17", check=False)
    assert refused.returncode == 2
    assert "different configuration" in refused.stderr and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr
    forced = _ingest(data, inputs, "--set", "ingest.batch_rows=17", "--force")
    assert forced.returncode == 0
    assert require_manifest(data / "ingest").config["batch_rows"] == 17


def test_tampered_output_is_refused_by_the_next_reader(tmp_path: Path):
    inputs = _write_inputs(tmp_path / "raw", files=1, rows=300)
    data = tmp_path / "data"
    _ingest(data, inputs)
    manifest = require_manifest(data / "ingest")
    shard = data / "ingest" / manifest.shards[0].path
    blob = bytearray(shard.read_bytes())
    blob[100] ^= 0x01
    shard.write_bytes(bytes(blob))
    with pytest.raises(ShardChecksumError, match="does not match the manifest"):
        read_shard(data / "ingest", manifest.shards[0])


def test_unreadable_file_is_a_clear_error_on_the_command_line(tmp_path: Path):
    inputs = tmp_path / "raw"
    inputs.mkdir()
    (inputs / "cut.jsonl.gz").write_bytes(gzip.compress(b'{"text": "x"}\n' * 5000)[:-100])
    result = _ingest(tmp_path / "data", inputs, check=False)
    assert result.returncode == 2
    assert "cut.jsonl.gz" in result.stderr and "Traceback" not in result.stderr
    skipped = _ingest(tmp_path / "data", inputs, "--set", "ingest.skip_bad_files=true", "--force")
    assert "skipped unreadable file" in skipped.stderr


def test_missing_input_and_bad_config_are_clear(tmp_path: Path):
    missing = _ingest(tmp_path / "data", tmp_path / "nothing-here", check=False)
    assert missing.returncode == 2 and "matches no file or folder" in missing.stderr
    bad = cli("-m", "stages.ingest", "--input", str(tmp_path), "--set", "ingest.shard_max_byte=5", check=False)
    assert bad.returncode == 2 and "ingest.shard_max_byte: unknown key" in bad.stderr


def test_help_and_status(tmp_path: Path):
    helped = cli("-m", "stages.ingest", "--help")
    assert "--input" in helped.stdout and "--force" in helped.stdout
    inputs = _write_inputs(tmp_path / "raw", files=2, rows=100)
    _ingest(tmp_path / "data", inputs)
    status = cli("-m", "kiln", "status", str(tmp_path / "data")).stdout
    ingest_row = next(line for line in status.splitlines() if line.startswith("ingest"))
    assert ingest_row.split()[:5] == ["ingest", "done", "2/2", "200", "200"]
    assert any(line.split()[:2] == ["clean", "missing"] for line in status.splitlines())
