"""The dedup stage: cluster decisions, the keep rule, and the whole stage on the demo ground truth."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from common.manifest import require_manifest
from common.shards import read_shard
from demo.truth import load_truth
from kiln.cli import read_kept_texts
from stages.dedup.minhash import exact_key
from stages.dedup.stage import EXACT, KEEP, NEAR, decide
from tests.conftest import cli
from tests.test_pipeline_demo import shared_demo_run
from tests.test_resume_stages import assert_same_output, run_to_fault


def _decide(method: str = "union_find"):
    #            doc:   10    11    12    20    21    30    40
    doc_ids = np.array([12, 10, 11, 20, 21, 30, 40])
    exact = np.array([b"a", b"a", b"b", b"c", b"c", b"d", b"e"], dtype="S16")
    near = np.array([[10, 11], [20, 30]])  # 10~11 near, 20~30 near; 40 alone
    category_rank = np.array([0, 2, 1, 3, 3, 3, 0], dtype=np.int16)
    quality = np.array([0.5, 0.9, 0.9, 0.2, 0.8, 0.8, 0.9])
    return decide(doc_ids, exact, near, category_rank, quality, method)


def test_keep_rule_category_then_quality_then_lowest_id():
    result = _decide()
    by_id = {int(d): (int(k), int(r), int(s)) for d, k, r, s in
             zip(result["doc_id"], result["kept_id"], result["reason"], result["cluster_size"], strict=True)}
    # cluster {10, 11, 12}: 12 has the best category (rank 0) even with a lower quality
    assert by_id[12] == (12, KEEP, 3)
    assert by_id[10] == (12, EXACT, 3)  # same normalized text as the keeper
    assert by_id[11] == (12, NEAR, 3)
    # cluster {20, 21, 30}: all rank 3; 21 and 30 tie on quality 0.8, the lower id wins
    assert by_id[21] == (21, KEEP, 3)
    assert by_id[20] == (21, EXACT, 3)
    assert by_id[30] == (21, NEAR, 3)
    assert by_id[40] == (40, KEEP, 1)
    assert list(result["doc_id"]) == sorted(result["doc_id"])


def test_both_component_methods_decide_the_same():
    a, b = _decide("union_find"), _decide("star_contraction")
    for key in a:
        assert np.array_equal(a[key], b[key]), key


@pytest.fixture(scope="module")
def demo_dedup(tmp_path_factory) -> Path:
    """The shared 4,000-record demo run (2 Ray workers)."""
    return shared_demo_run(tmp_path_factory)[0]


@pytest.mark.slow
def test_dedup_meets_the_quality_bar_on_the_ground_truth(demo_dedup: Path):
    truth = [r for r in load_truth(demo_dedup / "demo") if r.ingest == "ok"]
    after_clean = read_kept_texts(demo_dedup / "clean")
    kept = read_kept_texts(demo_dedup / "dedup")
    by_id = {r.source_id: r for r in truth}

    kept_keys = [exact_key(text) for text in kept.values()]
    assert len(kept_keys) == len(set(kept_keys)), "two documents with the same normalized text survived"
    groups: dict[str, list[str]] = {}
    for r in truth:
        if "exact_dup" in r.defects and r.dup_of in after_clean and r.source_id in after_clean:
            groups.setdefault(r.dup_of, [r.dup_of]).append(r.source_id)
    assert len(groups) > 50 and all(sum(member in kept for member in members) <= 1 for members in groups.values())

    pairs = [(r.source_id, r.dup_of) for r in truth if "near_dup" in r.defects
             and r.source_id in after_clean and r.dup_of in after_clean and r.jaccard >= 0.8]
    assert len(pairs) > 50
    removed = sum(not (a in kept and b in kept) for a, b in pairs)
    assert removed / len(pairs) >= 0.95

    linked = {x for r in truth if r.dup_of for x in (r.source_id, r.dup_of)}
    distinct = [s for s in after_clean if s not in linked and not by_id[s].defects]
    wrongly = [s for s in distinct if s not in kept]
    assert len(wrongly) / len(distinct) <= 0.005, wrongly[:5]

    # planted low-similarity pairs (J 0.3-0.6, below dedup.threshold 0.7) are not duplicates: both stay
    low = [(r.source_id, r.dup_of) for r in truth if "near_dup_low" in r.defects
           and r.source_id in after_clean and r.dup_of in after_clean]
    assert len(low) >= 30
    survived = sum(a in kept and b in kept for a, b in low)
    assert survived / len(low) >= 0.9, f"{len(low) - survived} of {len(low)} low-similarity pairs collapsed"


@pytest.mark.slow
def test_dedup_accounting_exclusions_and_cluster_sizes(demo_dedup: Path):
    manifest = require_manifest(demo_dedup / "dedup")
    acc = manifest.accounting
    assert acc.docs_in == require_manifest(demo_dedup / "clean").accounting.docs_out
    assert acc.docs_in == acc.docs_out + sum(acc.dropped.values())
    assert set(acc.dropped) == {"exact_dup", "near_dup"}
    kept_sizes = [size for info in manifest.shards
                  for size in read_shard(demo_dedup / "dedup", info).column("dup_cluster_size").to_pylist()]
    assert sum(kept_sizes) == acc.docs_in  # every cluster is represented once by its keeper
    kept_ids = {d for info in manifest.shards for d in read_shard(demo_dedup / "dedup", info).column("doc_id").to_pylist()}
    for reason in ("exact_dup", "near_dup"):
        for info in manifest.excluded[reason]:
            for row in read_shard(demo_dedup / "dedup", info).to_pylist():
                keeper = int(row["signal"].split("kept doc_id=")[1].split()[0])
                assert keeper in kept_ids, row
    stats = json.loads((demo_dedup / "dedup" / "_stats.json").read_text())["details"]
    assert sum(int(size) * n for size, n in stats["cluster_sizes"].items()) == acc.docs_in


@pytest.mark.slow
def test_one_and_two_ray_workers_keep_the_same_documents(demo_dedup: Path, tmp_path: Path):
    shutil.copytree(demo_dedup / "clean", tmp_path / "clean")
    cli("-m", "stages.dedup", "--data-dir", str(tmp_path), "--set", "ray.num_cpus=1")
    for data, cpus in ((tmp_path, 1), (demo_dedup, 2)):
        stats = json.loads((data / "dedup" / "_stats.json").read_text())
        assert stats["host"]["ray"] == {"mode": "local", "num_cpus": cpus}
    assert_same_output(tmp_path / "dedup", demo_dedup / "dedup")


@pytest.mark.slow
def test_sigkill_during_the_signature_step_then_resume_is_byte_identical(demo_dedup: Path, tmp_path: Path):
    shutil.copytree(demo_dedup / "clean", tmp_path / "clean")
    shards = len(require_manifest(tmp_path / "clean").shards)
    args = ["-m", "stages.dedup", "--data-dir", str(tmp_path), "--set", "ray.num_cpus=1"]
    run_to_fault(args, "dedup.signature.done:2", tmp_path / "killed.log")
    work = tmp_path / "dedup" / "_work"
    saved = len(list((work / "signatures").glob("part-*.npz")))
    # one signature task at a time (one Ray CPU): the kill follows the 2nd result; the 3rd task may have
    # finished in the moment between, so 2 or 3 files, and nothing of the later steps
    assert saved in (2, 3), saved
    assert not list((work / "edges").glob("*.npz")) and not (work / "decisions.npz").exists()
    resumed = cli(*args)
    assert f"dedup: reusing {saved} of {shards} signature files" in resumed.stderr
    assert_same_output(tmp_path / "dedup", demo_dedup / "dedup")
