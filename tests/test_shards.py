"""Shards and manifests: atomic, checksummed, refused when tampered with."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from common.errors import AccountingError
from common.files import file_sha256
from common.manifest import Accounting, Manifest, read_manifest, write_manifest
from common.schema import DOC_SCHEMA, category_array
from common.shards import ShardChecksumError, ShardWriter, read_shard, write_shard
from tests.conftest import child_env


def _docs(n: int, start: int = 0) -> pa.Table:
    return pa.Table.from_arrays(
        [
            pa.array(range(start, start + n), pa.int64()),
            pa.array([f"s{i}" for i in range(n)]),
            pa.array([f"text number {i} 中文" for i in range(n)], pa.large_string()),
            pa.array(["src"] * n),
            category_array(["news"] * n),
            pa.array([None] * n, pa.string()),
            pa.array([None] * n, pa.float32()),
            pa.array(["{}"] * n),
        ],
        schema=DOC_SCHEMA,
    )


def test_round_trip_and_checksum(tmp_path: Path):
    info = write_shard(tmp_path / "part-00000.arrow", _docs(100), tmp_path)
    assert info.rows == 100
    assert info.sha256 == file_sha256(tmp_path / "part-00000.arrow")
    assert read_shard(tmp_path, info).equals(_docs(100))
    again = write_shard(tmp_path / "part-00001.arrow", _docs(100), tmp_path)
    assert again.sha256 == info.sha256, "the same rows must give byte-identical shards"


def test_failed_write_leaves_nothing_visible(tmp_path: Path):
    with pytest.raises(RuntimeError), ShardWriter(tmp_path / "part-00000.arrow", DOC_SCHEMA, tmp_path) as writer:
        writer.write(_docs(10))
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_killed_write_leaves_no_visible_shard(tmp_path: Path):
    script = f"""
import sys, time
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
from pathlib import Path
from common.schema import DOC_SCHEMA
from common.shards import ShardWriter
from test_shards import _docs
root = Path({str(tmp_path)!r})
with ShardWriter(root / "part-00000.arrow", DOC_SCHEMA, root) as writer:
    for i in range(10_000):
        writer.write(_docs(1000, i * 1000))
        print("wrote", flush=True)
        time.sleep(0.01)
    writer.commit()
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parent.parent, env=child_env())
    for _ in range(5):
        proc.stdout.readline()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    visible = [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert visible == []
    assert any(p.name.startswith(".part-00000.arrow.tmp-") for p in tmp_path.iterdir())


def test_tampered_shard_is_refused(tmp_path: Path):
    info = write_shard(tmp_path / "part-00000.arrow", _docs(50), tmp_path)
    path = tmp_path / "part-00000.arrow"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ShardChecksumError, match="part-00000.arrow"):
        read_shard(tmp_path, info)


def _manifest(accounting: Accounting) -> Manifest:
    return Manifest(stage="ingest", code_version="v", fingerprint="f", config={}, input={},
                    shards=[], excluded={}, accounting=accounting)


def test_manifest_requires_balanced_accounting(tmp_path: Path):
    with pytest.raises(AccountingError, match="does not balance"):
        write_manifest(tmp_path, _manifest(Accounting(10, 7, {"bad_json": 2})))
    assert read_manifest(tmp_path) is None
    write_manifest(tmp_path, _manifest(Accounting(10, 7, {"bad_json": 3})))
    assert read_manifest(tmp_path).accounting.dropped == {"bad_json": 3}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]

