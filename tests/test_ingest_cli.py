"""Ingest through its command line: kill and resume, config changes, clear errors, status. The runs after the
first of a test parse the same command line in this process (``in_process``), on the session's Ray."""

from __future__ import annotations

import gzip
import json
import random
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from common.manifest import require_manifest
from common.shards import ShardChecksumError, read_shard
from tests.conftest import cli
from tests.resume_helpers import run_to_fault

pytestmark = pytest.mark.slow

WORDS = ["river", "mountain", "河流", "山脉", "city", "城市", "data", "数据", "model", "模型", "paper", "论文", "news", "新闻"]


def _write_inputs(folder: Path, files: int = 10, rows: int = 5000) -> Path:
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


def _ingest(data_dir: Path, inputs: Path, *extra: str, check: bool = True,
            run: Callable[..., subprocess.CompletedProcess] = cli) -> subprocess.CompletedProcess:
    """`python -m stages.ingest --input <inputs> --data-dir <data_dir> <extra>` in a new process, or by ``run``."""
    return run("-m", "stages.ingest", "--input", str(inputs), "--data-dir", str(data_dir),
               "--set", "ray.num_cpus=1", *extra, check=check)


def test_sigkill_then_resume_is_byte_identical(tmp_path: Path, in_process):
    inputs = _write_inputs(tmp_path / "raw")
    killed = tmp_path / "killed"
    args = ["-m", "stages.ingest", "--input", str(inputs), "--data-dir", str(killed), "--set", "ray.num_cpus=1"]
    run_to_fault(args, "ingest.unit.done:2", tmp_path / "killed.log")
    assert not (killed / "ingest" / "_manifest.json").exists()
    # One Ray CPU runs one unit at a time and the kill follows the driver's 2nd result within milliseconds,
    # while a unit (5,000 records) takes far longer: exactly 2 units are done.
    assert len(list((killed / "ingest" / "_work").glob("unit-*.json"))) == 2

    resumed = _ingest(killed, inputs, run=in_process)
    assert "resuming ingest: 2 of 10 units already done" in resumed.stderr
    _ingest(tmp_path / "clean", inputs, run=in_process)
    assert _digest(killed / "ingest") == _digest(tmp_path / "clean" / "ingest")
    assert not list((killed / "ingest").rglob(".*.tmp-*"))


def test_a_rerun_is_a_no_op_and_another_config_or_input_is_refused_until_forced(tmp_path: Path, in_process):
    """One ingest, then what a rerun meets: the same command (a no-op), another configuration, another input
    folder, an input file rewritten at the same size, a file added to the folder: each is refused (exit 2,
    the output untouched) until --force starts over; `kiln status` shows the finished stage."""
    inputs = _write_inputs(tmp_path / "raw", files=2, rows=200)
    other = _write_inputs(tmp_path / "other", files=3, rows=100)
    data = tmp_path / "data"
    _ingest(data, inputs)
    status = cli("-m", "kiln", "status", str(data)).stdout
    ingest_row = next(line for line in status.splitlines() if line.startswith("ingest"))
    assert ingest_row.split()[:5] == ["ingest", "done", "2/2", "400", "400"]
    assert any(line.split()[:2] == ["clean", "missing"] for line in status.splitlines())
    again = _ingest(data, inputs, run=in_process)
    assert "already done with this configuration" in again.stderr
    before = _digest(data / "ingest")

    refused = _ingest(data, inputs, "--set", "ingest.batch_rows=17", check=False, run=in_process)
    assert refused.returncode == 2
    assert "different configuration" in refused.stderr and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr
    elsewhere = _ingest(data, other, check=False, run=in_process)
    assert elsewhere.returncode == 2
    assert "different configuration or input" in elsewhere.stderr and "--force" in elsewhere.stderr
    assert "Traceback" not in elsewhere.stderr
    path = inputs / "part00.jsonl"
    original = path.read_bytes()
    path.write_bytes(original.replace(b'"id": "0-0"', b'"id": "9-9"', 1))
    assert path.stat().st_size == len(original) and path.read_bytes() != original
    rewritten = _ingest(data, inputs, check=False, run=in_process)
    assert rewritten.returncode == 2 and "different configuration or input" in rewritten.stderr
    path.write_bytes(original)
    added = inputs / "part02.jsonl"
    added.write_bytes(b'{"id": "new", "text": "one more file in the same folder"}\n')
    grown = _ingest(data, inputs, check=False, run=in_process)
    assert grown.returncode == 2 and "different configuration or input" in grown.stderr
    added.unlink()
    assert _digest(data / "ingest") == before, "a refused run leaves the output alone"

    forced = _ingest(data, inputs, "--set", "ingest.batch_rows=17", "--force", run=in_process)
    assert forced.returncode == 0 and require_manifest(data / "ingest").config["batch_rows"] == 17
    forced = _ingest(data, other, "--force", run=in_process)
    assert forced.returncode == 0 and require_manifest(data / "ingest").accounting.docs_in == 300


def test_tampered_output_is_refused_by_the_next_reader(tmp_path: Path, in_process):
    inputs = _write_inputs(tmp_path / "raw", files=1, rows=300)
    data = tmp_path / "data"
    _ingest(data, inputs, run=in_process)
    manifest = require_manifest(data / "ingest")
    shard = data / "ingest" / manifest.shards[0].path
    blob = bytearray(shard.read_bytes())
    blob[100] ^= 0x01
    shard.write_bytes(bytes(blob))
    with pytest.raises(ShardChecksumError, match="does not match the manifest"):
        read_shard(data / "ingest", manifest.shards[0])
    refused = in_process("-m", "stages.clean", "--data-dir", str(data), "--set", "ray.num_cpus=1", check=False)
    assert refused.returncode == 2, refused.stderr
    assert f"{shard}: sha256" in refused.stderr and "does not match the manifest" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not (data / "clean" / "_manifest.json").exists()


def test_sha256_fingerprint_sees_an_edit_between_the_sampled_blocks(tmp_path: Path, in_process):
    inputs = tmp_path / "raw"
    inputs.mkdir()
    records = [json.dumps({"id": str(i), "text": f"document {i} " + "word " * 60}) for i in range(8000)]
    path = inputs / "big.jsonl"
    path.write_text("\n".join(records) + "\n")
    original = path.read_bytes()
    size, block = len(original), 64 << 10
    assert size > 2 << 20  # sampled: 16 blocks of 64 KiB, so most bytes are never read
    third, fourth = (size - block) * 2 // 15, (size - block) * 3 // 15
    between = original.index(b"word", (third + block + fourth) // 2)  # in the gap between two sampled blocks
    edited = original[:between] + b"Word" + original[between + 4:]
    for mode in ("sampled", "sha256"):
        data = tmp_path / mode
        _ingest(data, inputs, "--set", f"ingest.input_fingerprint={mode}", run=in_process)
        path.write_bytes(edited)
        rerun = _ingest(data, inputs, "--set", f"ingest.input_fingerprint={mode}", check=False, run=in_process)
        path.write_bytes(original)
        if mode == "sampled":
            assert rerun.returncode == 0 and "already done" in rerun.stderr, "the documented blind spot"
        else:
            assert rerun.returncode == 2 and "different configuration or input" in rerun.stderr


def test_unreadable_file_is_a_clear_error_on_the_command_line(tmp_path: Path, in_process):
    inputs = tmp_path / "raw"
    inputs.mkdir()
    (inputs / "cut.jsonl.gz").write_bytes(gzip.compress(b'{"text": "x"}\n' * 5000)[:-100])
    result = _ingest(tmp_path / "data", inputs, check=False, run=in_process)
    assert result.returncode == 2
    assert "cut.jsonl.gz" in result.stderr and "Traceback" not in result.stderr
    skipped = _ingest(tmp_path / "data", inputs, "--set", "ingest.skip_bad_files=true", "--force", run=in_process)
    assert "skipped unreadable file" in skipped.stderr


def test_missing_input_and_bad_config_are_clear(tmp_path: Path):
    missing = _ingest(tmp_path / "data", tmp_path / "nothing-here", check=False)
    assert missing.returncode == 2 and "matches no file or folder" in missing.stderr
    bad = cli("-m", "stages.ingest", "--input", str(tmp_path), "--set", "ingest.shard_max_byte=5", check=False)
    assert bad.returncode == 2 and "ingest.shard_max_byte: unknown key" in bad.stderr


def test_help_names_the_options():
    helped = cli("-m", "stages.ingest", "--help")
    assert "--input" in helped.stdout and "--force" in helped.stdout
