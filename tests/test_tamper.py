"""A stage refuses an input manifest that was edited after its stage wrote it, naming the file, instead of
losing or inventing documents: a shard's entry removed, the accounting raised, a named output emptied, a
side file edited, an accounting that no longer follows from the stage before."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import cli
from tests.test_pipeline_demo import shared_demo_run


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return shared_demo_run(tmp_path_factory)[0]


def _edit(path: Path, change: Callable[[dict], None]) -> None:
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest, indent=2))


def _drop_first_shard(m: dict) -> None:
    m["shards"].pop(0)


def _raise_out(m: dict) -> None:
    m["accounting"]["out"] += 5
    m["accounting"]["in"] += 5


def _inflate_the_chain(m: dict) -> None:  # balanced, rows intact, but not what ingest wrote
    m["accounting"]["in"] += 7
    m["accounting"]["dropped"]["too_short"] = m["accounting"]["dropped"].get("too_short", 0) + 7


def _empty_validation(m: dict) -> None:
    m["outputs"]["validation"] = []


@pytest.mark.slow
@pytest.mark.parametrize(("stage", "change", "message"), [
    ("clean", _drop_first_shard, "document files hold"),
    ("clean", _raise_out, "document files hold"),
    ("clean", _inflate_the_chain, "but ingest wrote"),
    ("mix", _empty_validation, "document files hold"),
])
def test_an_edited_input_manifest_is_refused_naming_it(demo: Path, tmp_path: Path, stage: str,
                                                       change: Callable[[dict], None], message: str):
    data = tmp_path / "data"
    for name in ("ingest", "clean", "dedup", "mix")[:("ingest", "clean", "dedup", "mix").index(stage) + 1]:
        shutil.copytree(demo / name, data / name, ignore=shutil.ignore_patterns("_work"))
    _edit(data / stage / "_manifest.json", change)
    after = {"clean": "dedup", "mix": "tokenize"}[stage]
    result = cli("-m", f"stages.{after}", "--data-dir", str(data), "--set", "ray.num_cpus=1", check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"{data / stage / '_manifest.json'}: " in result.stderr and message in result.stderr
    assert not (data / after / "_manifest.json").exists()


@pytest.mark.slow
def test_an_edited_side_file_is_refused(demo: Path, tmp_path: Path):
    data = tmp_path / "data"
    for name in ("ingest", "clean", "dedup", "mix"):
        shutil.copytree(demo / name, data / name, ignore=shutil.ignore_patterns("_work"))
    summary = data / "mix" / "mix_summary.json"
    text = summary.read_text()
    at = next(i for i, c in enumerate(text) if c.isdigit())
    summary.write_text(text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1:])  # same size, other content
    result = cli("-m", "stages.tokenize", "--data-dir", str(data), "--set", "ray.num_cpus=1", check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "mix_summary.json does not match its recorded sha256" in result.stderr


@pytest.mark.slow
def test_force_refuses_a_corrupt_input_before_it_removes_the_previous_output(demo: Path, tmp_path: Path):
    data = tmp_path / "data"
    for name in ("ingest", "clean", "dedup"):
        shutil.copytree(demo / name, data / name, ignore=shutil.ignore_patterns("_work"))
    shard = data / "clean" / json.loads((data / "clean" / "_manifest.json").read_text())["shards"][-1]["path"]
    blob = bytearray(shard.read_bytes())
    blob[len(blob) // 2] ^= 0x20
    shard.write_bytes(bytes(blob))
    before = sorted(p.relative_to(data) for p in (data / "dedup").rglob("*") if "_logs" not in p.parts)
    result = cli("-m", "stages.dedup", "--data-dir", str(data), "--force", "--set", "ray.num_cpus=1", check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"{shard.name} does not match its recorded sha256" in result.stderr
    assert sorted(p.relative_to(data) for p in (data / "dedup").rglob("*") if "_logs" not in p.parts) == before
