"""The dedup stage: signatures per shard, LSH per partition, components, then a filtering map.

Global step (``prepare``), every part resumable on its own under ``_work/``:
1. per input shard, on Ray: exact keys, MinHash signatures and LSH band keys (``signatures/``);
2. per band-key partition, on Ray: bucket stars, verified by the signature Jaccard (``edges/``);
3. on the driver: exact groups + verified edges -> clusters -> one kept document per cluster
   (``decisions.npz``).
The map units then copy each input shard, keeping one document per cluster.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa

from common.config import DedupConfig, KilnConfig
from common.errors import KilnError
from common.faults import fault_point
from common.files import atomic_write_bytes
from common.manifest import require_manifest
from common.runner import WORK_DIR, MapStage, UnitContext, WorkUnit, input_schema_with, run_tasks, shard_plan
from common.shards import ShardInfo, iter_batches, read_shard
from stages.dedup.components import star_contraction_components, union_find_components
from stages.dedup.lsh import band_keys, partition_of, star_edges
from stages.dedup.minhash import exact_keys, shingle_hashes, signatures

SIGNATURE_DIR = "signatures"
EDGE_DIR = "edges"
DECISIONS = "decisions.npz"
KEEP, EXACT, NEAR = 0, 1, 2
REASONS = {EXACT: "exact_dup", NEAR: "near_dup"}


def _save_npz(path: Path, **arrays: np.ndarray) -> None:
    """np.savez to a temporary name, then an atomic rename (a killed run leaves nothing half-written)."""
    import io

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write_bytes(path, buffer.getvalue())


def _quality(table: pa.Table, column: str) -> np.ndarray:
    if column not in table.column_names:
        raise KilnError(f"dedup.quality_signal: the input has no column {column!r} (columns: {table.column_names})")
    return np.nan_to_num(table.column(column).to_numpy(zero_copy_only=False).astype(np.float64), nan=-np.inf)


def signature_task(input_dir: str, shard: dict, out: str, cfg: DedupConfig) -> int:
    """Exact keys, signatures and band keys of one input shard, saved to ``out``; returns its rows."""
    path = Path(out)
    if path.exists():
        return int(np.load(path)["doc_id"].size)
    table = read_shard(Path(input_dir), ShardInfo(**shard))
    texts = table.column("text").to_pylist()
    hashes, offsets = shingle_hashes(texts, cfg.shingle_size)
    sigs = signatures(hashes, offsets, cfg.num_perm, cfg.seed)
    rank = {name: i for i, name in enumerate(cfg.category_priority)}
    categories = table.column("category").to_pylist()
    _save_npz(
        path,
        doc_id=table.column("doc_id").to_numpy(),
        exact=np.array(exact_keys(texts), dtype="S16"),
        sig=sigs,
        bands=band_keys(sigs, cfg.bands, cfg.rows),
        has_shingles=np.diff(offsets) > 0,
        category_rank=np.array([rank.get(c, len(rank)) for c in categories], dtype=np.int16),
        quality=_quality(table, cfg.quality_signal),
    )
    return table.num_rows


def _concat(files: list[Path], name: str) -> np.ndarray:
    return np.concatenate([np.load(f)[name] for f in files])


def _gather_signatures(files: list[str], where: np.ndarray) -> np.ndarray:
    """Signature rows at (file number, row) pairs, loading one shard's signatures at a time."""
    out: np.ndarray | None = None
    for number in np.unique(where[:, 0]):
        rows = where[:, 0] == number
        sigs = np.load(files[number])["sig"]
        if out is None:
            out = np.empty((len(where), sigs.shape[1]), dtype=sigs.dtype)
        out[rows] = sigs[where[rows, 1]]
    return out if out is not None else np.zeros((0, 0), np.uint64)


def partition_task(signature_files: list[str], partition: int, cfg: DedupConfig, out: str) -> int:
    """Star edges of one band-key partition, kept when the signature Jaccard reaches the threshold."""
    path = Path(out)
    if path.exists():
        return int(np.load(path)["edges"].shape[0])
    doc_ids, keys, places = [], [], []
    for number, file in enumerate(signature_files):
        data = np.load(file)
        bands = data["bands"]
        hit = (partition_of(bands, cfg.partitions) == partition) & data["has_shingles"][:, None]
        rows, _ = np.nonzero(hit)
        doc_ids.append(data["doc_id"][rows])
        keys.append(bands[hit])
        places.append(np.stack([np.full(rows.size, number), rows], axis=1))
    flat_ids = np.concatenate(doc_ids)
    edges = star_edges(flat_ids, np.concatenate(keys)).reshape(-1, 2)
    similarity = np.zeros(len(edges))
    if len(edges):
        order = np.argsort(flat_ids, kind="stable")
        place = np.concatenate(places)
        ends = place[order[np.searchsorted(flat_ids[order], edges.ravel())]]
        both = _gather_signatures(signature_files, ends)  # each shard's signatures are loaded once
        similarity = (both[0::2] == both[1::2]).mean(axis=1)
    keep = similarity >= cfg.threshold
    _save_npz(path, edges=edges[keep], similarity=similarity[keep])
    return int(keep.sum())


def _components(num_nodes: int, edges: np.ndarray, method: str) -> np.ndarray:
    if method == "star_contraction":
        return star_contraction_components(num_nodes, edges)
    return union_find_components(num_nodes, edges)


def decide(doc_ids: np.ndarray, exact: np.ndarray, near_edges: np.ndarray, category_rank: np.ndarray,
           quality: np.ndarray, method: str) -> dict[str, np.ndarray]:
    """One kept document per cluster (exact groups joined by near-duplicate edges).

    The keeper has the lowest category rank, then the highest quality, then the lowest doc id.
    Returns per document (sorted by doc id): kept_id, reason (KEEP/EXACT/NEAR), cluster_size.
    """
    order = np.argsort(doc_ids)
    doc_ids, exact, category_rank, quality = doc_ids[order], exact[order], category_rank[order], quality[order]
    n = doc_ids.size
    _, exact_group = np.unique(exact, return_inverse=True)
    leader = np.full(exact_group.max() + 1 if n else 0, n, dtype=np.int64)
    np.minimum.at(leader, exact_group, np.arange(n))
    exact_edges = np.stack([leader[exact_group], np.arange(n)], axis=1)
    exact_edges = exact_edges[exact_edges[:, 0] != exact_edges[:, 1]]
    near = np.searchsorted(doc_ids, near_edges) if near_edges.size else np.zeros((0, 2), np.int64)
    labels = _components(n, np.concatenate([exact_edges, near.reshape(-1, 2)]), method)
    best = np.lexsort((np.arange(n), -quality, category_rank, labels))
    first = np.concatenate(([True], labels[best][1:] != labels[best][:-1]))
    keeper_of_label = np.empty(n, dtype=np.int64)
    keeper_of_label[labels[best][first]] = best[first]
    keeper = keeper_of_label[labels]
    sizes = np.bincount(labels, minlength=n)[labels]
    reason = np.where(keeper == np.arange(n), KEEP, np.where(exact == exact[keeper], EXACT, NEAR))
    return {"doc_id": doc_ids, "kept_id": doc_ids[keeper], "reason": reason.astype(np.int8),
            "cluster_size": sizes.astype(np.int32)}


def prepare(cfg: KilnConfig, input_dir: Path | None, stage_dir: Path, log: logging.Logger) -> None:
    """Signatures, LSH partitions and cluster decisions, each step resumed from what is on disk."""
    dcfg = cfg.dedup
    work = stage_dir / WORK_DIR
    decisions = work / DECISIONS
    if decisions.exists():
        return
    manifest = require_manifest(input_dir)
    sig_dir = work / SIGNATURE_DIR
    sig_dir.mkdir(parents=True, exist_ok=True)
    files = [sig_dir / f"part-{i:05d}.npz" for i in range(len(manifest.shards))]
    reused = sum(f.exists() for f in files)
    if reused:
        log.info("dedup: reusing %d of %d signature files", reused, len(files))
    calls = [(str(input_dir), info.to_dict(), str(f), dcfg) for info, f in zip(manifest.shards, files, strict=True)]
    run_tasks(signature_task, calls, cfg, "dedup signatures", log, "dedup.signature")
    edge_dir = work / EDGE_DIR
    edge_dir.mkdir(exist_ok=True)
    edge_files = [edge_dir / f"p-{p:04d}.npz" for p in range(dcfg.partitions)]
    calls = [([str(f) for f in files], p, dcfg, str(out)) for p, out in enumerate(edge_files)]
    run_tasks(partition_task, calls, cfg, "dedup LSH partitions", log, "dedup.partition")
    near_edges = np.unique(_concat(edge_files, "edges").reshape(-1, 2).astype(np.int64), axis=0)  # a pair recurs per shared band
    result = decide(_concat(files, "doc_id"), _concat(files, "exact"), near_edges,
                    _concat(files, "category_rank"), _concat(files, "quality"), dcfg.components)
    counts = Counter(result["reason"].tolist())
    log.info("dedup: %d documents, %d verified near-duplicate edges, %d exact and %d near duplicates to remove",
             result["doc_id"].size, len(near_edges), counts.get(EXACT, 0), counts.get(NEAR, 0))
    fault_point("dedup.decisions")
    _save_npz(decisions, **result)


def process(unit: WorkUnit, ctx: UnitContext) -> None:
    """Copy one input shard, keeping one document per duplicate cluster."""
    decisions = np.load(ctx.stage_dir / WORK_DIR / DECISIONS)
    all_ids, kept_ids = decisions["doc_id"], decisions["kept_id"]
    reasons, sizes = decisions["reason"], decisions["cluster_size"]
    for batch in iter_batches(ctx.input_dir, ShardInfo(**unit.spec["shard"])):
        ctx.count_in(batch.num_rows)
        ids = batch.column("doc_id").to_numpy()
        at = np.searchsorted(all_ids, ids)
        if np.any(all_ids[np.minimum(at, all_ids.size - 1)] != ids):
            raise KilnError(f"dedup: {unit.spec['shard']['path']} holds documents missing from the decisions; "
                            "rerun dedup with --force")
        reason, size = reasons[at], sizes[at]
        table = pa.Table.from_batches([batch]).append_column("dup_cluster_size", pa.array(size, pa.int32()))
        ctx.keep(table.filter(pa.array(reason == KEEP)))
        for code, name in REASONS.items():
            rows = np.nonzero(reason == code)[0]
            if rows.size:
                part = table.take(pa.array(rows))
                ctx.drop(name, part, signal=[f"kept doc_id={k} (cluster of {s})" for k, s in
                                             zip(kept_ids[at[rows]], size[rows], strict=True)])
                langs = part.column("lang").to_pylist()
                cats = part.column("category").to_pylist()
                ctx.add_stats({f"removed_{name}_by_lang": dict(Counter(langs)),
                               f"removed_{name}_by_category": dict(Counter(cats))})
        kept_sizes = size[reason == KEEP]
        ctx.add_stats({"cluster_sizes": {str(s): int(c) for s, c in zip(*np.unique(kept_sizes, return_counts=True),
                                                                       strict=True)}})


STAGE = MapStage(
    name="dedup", output_schema=input_schema_with(pa.field("dup_cluster_size", pa.int32())),
    plan=shard_plan, process=process, prepare=prepare,
)
