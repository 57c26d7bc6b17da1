"""Disk full: a stage or the demo generator that runs out of space says where, how much is free and what was
needed, leaves nothing half-written, and a rerun after space is freed ends byte-identical to a run that never
ran out."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.pipeline import STAGE_ORDER
from tests.conftest import cli
from tests.faults.filesystems import grow, small_filesystem
from tests.resume_helpers import output_files

pytestmark = pytest.mark.slow

MiB = 1 << 20
DEMO_DOCS = 1500


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


RUN_DEMO = ("-m", "kiln", "run", "--demo", "--demo-docs", str(DEMO_DOCS))


def _run_demo(data: Path):
    """The demo run as a command."""
    return cli(*RUN_DEMO, "--data-dir", str(data), check=False, timeout=900)


def _no_noise(stderr: str) -> None:
    assert "Traceback" not in stderr and "Unhandled error" not in stderr, stderr[-3000:]


def test_the_demo_generator_on_a_full_disk_says_so_and_leaves_no_corpus(tmp_path: Path):
    with small_filesystem(tmp_path / "small", 1 * MiB) as data:
        result = _run_demo(data)
        assert result.returncode == 2
        _no_noise(result.stderr)
        assert f"demo corpus: no space left on the filesystem of {data / 'demo'} (" in result.stderr
        assert "free of 1.0 MiB); it needs about" in result.stderr
        assert not (data / "demo" / "corpus").exists() and not (data / "demo" / "demo.json").exists()


def test_a_stage_on_a_full_disk_stops_cleanly_and_a_rerun_with_space_is_byte_identical(tmp_path: Path,
                                                                                       in_process):
    """The run that meets the full disk is the command; the reference and the rerun, the same command line in
    this process (on the session's Ray)."""
    mount = tmp_path / "small"  # every run uses this path: manifests record their input paths
    with small_filesystem(mount, 256 * MiB) as data:
        in_process(*RUN_DEMO, "--data-dir", str(data))
        reference = {stage: output_files(data / stage) for stage in STAGE_ORDER}
        room = _size(data / "demo") + _size(data / "ingest") + _size(data / "clean") // 2
    with small_filesystem(mount, room) as data:
        full = _run_demo(data)
        assert full.returncode == 2
        _no_noise(full.stderr)
        assert f"clean: no space left on the filesystem of {data / 'clean'} (" in full.stderr
        assert "rerun: the finished work units are kept" in full.stderr
        assert not [p for p in data.rglob("*") if ".tmp-" in p.name], "temporary files were left behind"
        assert not (data / "clean" / "_manifest.json").exists()
        grow(data, 256 * MiB)
        in_process(*RUN_DEMO, "--data-dir", str(data))
        for stage in STAGE_ORDER:
            got = output_files(data / stage)
            assert sorted(got) == sorted(reference[stage])
            assert [name for name in got if got[name] != reference[stage][name]] == [], stage
