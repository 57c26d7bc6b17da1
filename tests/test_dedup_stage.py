"""The dedup stage: cluster decisions, the keep rule, and the whole stage on the demo ground truth."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from common.manifest import require_manifest
from common.schema import DOC_ID_STRIDE
from common.shards import read_shard
from demo.truth import load_truth
from kiln.commands.eval_truth import read_kept_texts
from stages.dedup.config import DedupConfig
from stages.dedup.minhash import EMPTY, exact_key
from stages.dedup.shuffle import partition_dir
from stages.dedup.stage import (
    EXACT,
    KEEP,
    NEAR,
    decide_clusters,
    ids_path,
    keep_decision,
    lsh_partition_task,
    shard_decisions,
    signature_band_keys,
    signature_writer,
    write_signature_outputs,
)
from tests.conftest import cli, make_config
from tests.dedup_reference import single_node_decisions
from tests.resume_helpers import assert_same_output, run_to_fault
from tests.test_pipeline_demo import shared_demo_run


def _members() -> dict[str, np.ndarray]:
    #                       doc:   10    11    12    20    21    30    40
    return {"label": np.array([10, 10, 10, 20, 20, 20, 40]),
            "doc_id": np.array([12, 10, 11, 20, 21, 30, 40]),
            "exact": np.array([b"a", b"a", b"b", b"c", b"c", b"d", b"e"], dtype="S16"),
            "category_rank": np.array([0, 2, 1, 3, 3, 3, 0], dtype=np.int16),
            "quality": np.array([0.5, 0.9, 0.9, 0.2, 0.8, 0.8, 0.9])}


def test_keep_rule_category_then_quality_then_lowest_id():
    members = _members()  # clusters {10, 11, 12}, {20, 21, 30}, {40}; rows in doc order 12, 10, 11, 20, 21, 30, 40
    result = keep_decision(members)
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
    shuffled = np.random.default_rng(0).permutation(7)
    again = keep_decision({name: column[shuffled] for name, column in members.items()})
    assert {int(d): int(k) for d, k in zip(again["doc_id"], again["kept_id"], strict=True)} == \
        {d: k for d, (k, _, _) in by_id.items()}, "the decision does not depend on the rows' order"


def distributed_decisions(work: Path, shards: int) -> dict[str, np.ndarray]:
    """The stage's decisions for every document (unlisted ones kept alone), sorted by doc id."""
    parts: dict[str, list[np.ndarray]] = {name: [] for name in ("doc_id", "kept_id", "reason", "cluster_size")}
    for shard in range(shards):
        ids = np.sort(np.load(ids_path(work, shard))["doc_id"])
        listed = shard_decisions(work, shard)
        at = np.searchsorted(listed["doc_id"], ids)
        hit = np.isin(ids, listed["doc_id"])
        parts["doc_id"].append(ids)
        for name, alone in (("kept_id", ids), ("reason", np.full(ids.size, KEEP)), ("cluster_size", np.ones(ids.size))):
            column = np.array(alone, dtype=listed[name].dtype)
            column[hit] = listed[name][at[hit]]
            parts[name].append(column)
    merged = {name: np.concatenate(columns) for name, columns in parts.items()}
    order = np.argsort(merged["doc_id"])
    return {name: column[order] for name, column in merged.items()}


def _assert_same_decisions(work: Path, shards: int, cfg) -> dict[str, np.ndarray]:
    expected = single_node_decisions(work, shards, cfg)
    got = distributed_decisions(work, shards)
    for name in expected:
        assert np.array_equal(got[name], expected[name]), name
    return got


def _write_synthetic_corpus(work: Path, cfg, shards: int = 5, per_shard: int = 400) -> dict[str, list[np.ndarray]]:
    """Signature outputs of a corpus with long near-duplicate chains, big clusters and exact-only groups.

    Returns the planted groups (as positions into the corpus) so a test can check they became clusters."""
    rng = np.random.default_rng(11)
    n = shards * per_shard
    sigs = rng.integers(0, 2**63, size=(n, cfg.dedup.num_perm), dtype=np.uint64)
    exact = np.frombuffer(rng.bytes(16 * n), dtype="S16").copy()
    slots = iter(rng.permutation(n))  # planted documents land in random shards and partitions

    def take(k: int) -> np.ndarray:
        return np.array([next(slots) for _ in range(k)])

    chains = [take(150) for _ in range(3)]
    for chain in chains:  # each link redraws 6 of 128 positions: neighbours ~0.95, the ends unrelated
        for a, b in zip(chain[:-1], chain[1:], strict=True):
            sigs[b] = sigs[a]
            changed = rng.choice(cfg.dedup.num_perm, 6, replace=False)
            sigs[b, changed] = rng.integers(0, 2**63, size=6, dtype=np.uint64)
    big = take(400)
    for i, doc in enumerate(big[1:], 1):
        sigs[doc] = sigs[big[0]]
        if i % 4:  # three in four are near copies, the rest exact copies (same text key)
            changed = rng.choice(cfg.dedup.num_perm, 8, replace=False)
            sigs[doc, changed] = rng.integers(0, 2**63, size=8, dtype=np.uint64)
        else:
            exact[doc] = exact[big[0]]
    unshingled = take(60)  # too short for shingles: only their exact keys can join them
    sigs[unshingled] = EMPTY
    groups = [unshingled[i::10] for i in range(10)]
    for group in groups:
        exact[group] = exact[group[0]]
    quality = np.round(rng.random(n), 1)  # ties on quality, decided by the doc id
    quality[rng.random(n) < 0.05] = -np.inf
    rank = rng.integers(0, 7, size=n).astype(np.int16)
    for shard in range(shards):
        rows = slice(shard * per_shard, (shard + 1) * per_shard)
        doc_id = shard * DOC_ID_STRIDE + np.arange(per_shard, dtype=np.int64)
        with signature_writer(work, shard, per_shard, cfg.dedup.num_perm) as sink:
            sink.write(sigs[rows].tobytes())
        write_signature_outputs(work, shard, doc_id, exact[rows], *signature_band_keys(sigs[rows], 0, cfg.dedup),
                                rank[rows], quality[rows], cfg.dedup)
    return {"chains": chains, "big": [big], "exact_only": groups}


def test_distributed_steps_decide_as_one_node_on_chains_and_big_clusters(tmp_path: Path, ray_local):
    cfg = make_config("dedup.partitions=4", "ray.num_cpus=2")
    work = tmp_path / "_work"
    planted = _write_synthetic_corpus(work, cfg)
    summary = decide_clusters(work, 5, cfg, logging.getLogger("test"))
    assert summary["rounds"] >= 3, "long chains need several large-star/small-star rounds"
    got = _assert_same_decisions(work, 5, cfg.dedup)
    position_ids = np.concatenate([s * DOC_ID_STRIDE + np.arange(400) for s in range(5)])
    at = np.searchsorted(got["doc_id"], position_ids)
    for kind, groups in planted.items():
        for group in groups:
            kept = got["kept_id"][at[group]]
            assert np.all(kept == kept[0]) and got["cluster_size"][at[group]].min() >= len(group), kind


def test_a_partition_task_reads_only_its_own_partition(tmp_path: Path):
    cfg = make_config("dedup.partitions=4")
    partitions = cfg.dedup.partitions
    full = tmp_path / "full"
    _write_synthetic_corpus(full, cfg)
    for partition in range(partitions):
        lsh_partition_task(str(full), partition, cfg.dedup)
    for partition in range(partitions):
        alone = tmp_path / f"only-{partition}"  # the signatures (candidates' rows) and one partition's keys
        shutil.copytree(full / "signatures", alone / "signatures")
        for step in ("lsh/bands", "lsh/exact"):
            shutil.copytree(partition_dir(full / step, partition), partition_dir(alone / step, partition))
        for task in range(partitions):
            lsh_partition_task(str(alone), task, cfg.dedup)
        written = {p.relative_to(alone): p for p in (alone / "graph").rglob("*.npz")}
        # every other task found nothing to read; this one wrote exactly what it wrote beside all partitions
        assert written and all(p.name == f"from-lsh-{partition:05d}.npz" for p in written)
        assert set(written) == {p.relative_to(full) for p in (full / "graph").rglob(f"from-lsh-{partition:05d}.npz")}
        for relative, path in written.items():
            a, b = np.load(full / relative), np.load(path)
            assert all(np.array_equal(a[k], b[k]) for k in a.files), relative


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
def test_distributed_steps_decide_as_one_node_on_the_demo_corpus(demo_dedup: Path):
    manifest = require_manifest(demo_dedup / "dedup")
    got = _assert_same_decisions(demo_dedup / "dedup" / "_work", len(manifest.shards), DedupConfig(**manifest.config))
    assert (got["reason"] == EXACT).sum() > 50 and (got["reason"] == NEAR).sum() > 50


@pytest.mark.slow
def test_dedup_accounting_exclusions_and_cluster_sizes(demo_dedup: Path):
    manifest = require_manifest(demo_dedup / "dedup")
    acc = manifest.accounting
    assert acc.docs_in == require_manifest(demo_dedup / "clean").accounting.docs_out
    assert acc.docs_in == acc.docs_out + sum(acc.dropped.values())
    assert set(acc.dropped) == {"exact_dup", "near_dup", "contaminated"}  # the demo copies evaluation questions
    kept_sizes = [size for info in manifest.shards
                  for size in read_shard(demo_dedup / "dedup", info).column("dup_cluster_size").to_pylist()]
    kept_ids = {d for info in manifest.shards for d in read_shard(demo_dedup / "dedup", info).column("doc_id").to_pylist()}
    contaminated = {d for info in manifest.excluded["contaminated"]
                    for d in read_shard(demo_dedup / "dedup", info).column("doc_id").to_pylist()}
    copies_of_contaminated = 0
    for reason in ("exact_dup", "near_dup"):
        for info in manifest.excluded[reason]:
            for row in read_shard(demo_dedup / "dedup", info).to_pylist():
                keeper = int(row["signal"].split("kept doc_id=")[1].split()[0])
                assert keeper in kept_ids | contaminated, row
                copies_of_contaminated += keeper in contaminated
    # every cluster is represented once by its keeper, unless the keeper copies an evaluation item
    assert sum(kept_sizes) + len(contaminated) + copies_of_contaminated == acc.docs_in
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
def test_sigkill_during_the_signature_step_then_resume_is_byte_identical(demo_dedup: Path, tmp_path: Path,
                                                                         in_process):
    shutil.copytree(demo_dedup / "clean", tmp_path / "clean")
    shards = len(require_manifest(tmp_path / "clean").shards)
    args = ["-m", "stages.dedup", "--data-dir", str(tmp_path), "--set", "ray.num_cpus=1"]
    run_to_fault(args, "dedup.signature.done:2", tmp_path / "killed.log")
    work = tmp_path / "dedup" / "_work"
    saved = len(list((work / "signatures").glob("s-*.npz")))
    # one signature task at a time (one Ray CPU): the kill follows the 2nd result; the 3rd task may have
    # finished in the moment between, so 2 or 3 files, and nothing of the later steps
    assert saved in (2, 3), saved
    assert not list((work / "lsh").glob("done-*.json")) and not (work / "decided.json").exists()
    resumed = in_process(*args)
    assert f"dedup: reusing {saved} of {shards} signature files" in resumed.stderr
    assert_same_output(tmp_path / "dedup", demo_dedup / "dedup")
