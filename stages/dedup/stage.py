"""The dedup stage: signatures per shard, LSH per partition, distributed components, then a filtering map.

Global step (``prepare``), every task resumable on its own under ``_work/``, no step on one node:
1. per input shard: exact keys, MinHash signatures and LSH band keys; each band key and exact key
   is routed straight to its partition's folder (``lsh/``), each document's keep-rule columns to
   its node partition (``nodes/``);
2. per band-key partition: bucket stars verified by the signature Jaccard (the signature rows of
   candidates only, memory-mapped) plus exact-key stars: the duplicate graph's edges;
3. connected components in large-star/small-star rounds (stages/dedup/graph.py);
4. per node partition: each clustered document's label, routed to its label's partition
   (``members/``); per label partition: one kept document per cluster, each decision routed to
   its shard (``decisions/``).
The map units then copy each input shard, keeping one document per cluster, and remove the kept
documents that share text with an evaluation item (stages/dedup/decontaminate.py; its index is
built once, in ``prepare``). The driver holds one small result per task, never a per-document array.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa

from common.config import KilnConfig
from common.errors import KilnError
from common.eval_sets import DECONTAMINATION_REPORT, set_files
from common.faults import fault_point
from common.files import atomic_write_json, atomic_writer, file_sha256
from common.manifest import require_manifest
from common.runner import (
    WORK_DIR,
    MapStage,
    Plan,
    TaskRunner,
    UnitContext,
    UnitResult,
    WorkUnit,
    input_schema_with,
    run_tasks,
    shard_plan,
)
from common.shards import ShardInfo, iter_batches
from stages.dedup.components import star_labels
from stages.dedup.config import DedupConfig
from stages.dedup.decontaminate import (
    CONTAMINATED,
    CUT_OUTPUT,
    INDEX_NAME,
    ContaminationIndex,
    build_index,
    decontaminate,
    eval_set_paths,
    report,
)
from stages.dedup.graph import (
    EDGE_COLUMNS,
    connected_components,
    owned_by,
    round_dir,
    write_edges_to_both_ends,
)
from stages.dedup.lsh import band_keys, partition_of, star_edges
from stages.dedup.minhash import EMPTY, exact_keys, shingle_hashes, signatures
from stages.dedup.shuffle import (
    node_partition,
    once,
    read_partition,
    save_npz,
    write_partitioned,
)

SIGNATURE_DIR, LSH_DIR, NODE_DIR, GRAPH_DIR = "signatures", "lsh", "nodes", "graph"
MEMBER_DIR, DECISION_DIR, DECIDED = "members", "decisions", "decided.json"
KEEP, EXACT, NEAR = 0, 1, 2
REASONS = {EXACT: "exact_dup", NEAR: "near_dup"}
BAND_COLUMNS = {"doc_id": "int64", "key": "uint64", "shard": "int32", "row": "int32"}
EXACT_COLUMNS = {"doc_id": "int64", "key": "S16"}
NODE_COLUMNS = {"doc_id": "int64", "category_rank": "int16", "quality": "float64", "exact": "S16", "shard": "int32"}
MEMBER_COLUMNS = {"label": "int64", **NODE_COLUMNS}
DECISION_COLUMNS = {"doc_id": "int64", "kept_id": "int64", "reason": "int8", "cluster_size": "int32"}
SIGNATURE_BATCH_DOCS = 4096  # a signature task's memory follows this, not its shard's size
SIMILARITY_BATCH_EDGES = 8192  # an LSH task holds the signature rows of this many candidate edges at a time


def _quality(table: pa.Table, column: str) -> np.ndarray:
    if column not in table.column_names:
        raise KilnError(f"dedup.quality_signal: the input has no column {column!r} (columns: {table.column_names})")
    return np.nan_to_num(table.column(column).to_numpy(zero_copy_only=False).astype(np.float64), nan=-np.inf)


def signature_path(work: Path, shard: int) -> Path:
    """A shard's signature matrix (.npy, memory-mapped by the LSH tasks)."""
    return work / SIGNATURE_DIR / f"s-{shard:05d}.sig.npy"


def ids_path(work: Path, shard: int) -> Path:
    """A shard's doc ids, written last: the marker that its signature task finished."""
    return work / SIGNATURE_DIR / f"s-{shard:05d}.npz"


def exact_partition(keys: np.ndarray, partitions: int) -> np.ndarray:
    """Partition of each 16-byte exact key, from its first 8 bytes."""
    return partition_of(np.frombuffer(np.ascontiguousarray(keys).tobytes(), dtype=np.uint64)[0::2], partitions)


@contextmanager
def signature_writer(work: Path, shard: int, rows: int, num_perm: int) -> Iterator[BinaryIO]:
    """A shard's signature matrix file (``rows`` × ``num_perm`` uint64, .npy) to stream row blocks into; atomic."""
    with atomic_writer(signature_path(work, shard)) as sink:
        np.lib.format.write_array_header_2_0(sink, {"descr": np.dtype(np.uint64).str, "fortran_order": False,
                                                    "shape": (rows, num_perm)})
        yield sink


def signature_band_keys(sigs: np.ndarray, first_row: int, cfg: DedupConfig) -> tuple[np.ndarray, np.ndarray]:
    """The LSH band keys of the rows of ``sigs`` that have shingles (numbered from ``first_row``), flat, and the
    row of each key."""
    shingled = np.flatnonzero((sigs != EMPTY).any(axis=1))
    keys = band_keys(sigs[shingled], cfg.bands, cfg.rows).ravel()
    return keys, np.repeat((first_row + shingled).astype(np.int32), cfg.bands)


def write_signature_outputs(work: Path, shard: int, doc_id: np.ndarray, exact: np.ndarray, bands: np.ndarray,
                            band_rows: np.ndarray, category_rank: np.ndarray, quality: np.ndarray,
                            cfg: DedupConfig) -> None:
    """Route one shard's band keys (``signature_band_keys``), exact keys and keep-rule columns to their
    partitions, then mark it done (its signature file is written first, by ``signature_writer``)."""
    name = f"s-{shard:05d}"
    write_partitioned(work / LSH_DIR / "bands", name, partition_of(bands, cfg.partitions), cfg.partitions,
                      doc_id=doc_id[band_rows], key=bands, shard=np.full(band_rows.size, shard, np.int32),
                      row=band_rows)
    write_partitioned(work / LSH_DIR / "exact", name, exact_partition(exact, cfg.partitions), cfg.partitions,
                      doc_id=doc_id, key=exact)
    write_partitioned(work / NODE_DIR, name, node_partition(doc_id, cfg.partitions), cfg.partitions,
                      doc_id=doc_id, category_rank=category_rank, quality=quality, exact=exact,
                      shard=np.full(doc_id.size, shard, np.int32))
    save_npz(ids_path(work, shard), doc_id=doc_id)


def signature_task(input_dir: str, shard_info: dict, shard: int, work: str, cfg: DedupConfig) -> int:
    """Exact keys, signatures and band keys of one input shard, routed to their partitions; returns its rows.

    The shard is read SIGNATURE_BATCH_DOCS documents at a time and its signature matrix streamed to disk, so the
    task holds one batch's texts and shingles, never the shard's."""
    root, info = Path(work), ShardInfo(**shard_info)
    marker = ids_path(root, shard)
    if marker.exists():
        return int(np.load(marker)["doc_id"].size)
    rank = {name: i for i, name in enumerate(cfg.category_priority)}
    columns: dict[str, list[np.ndarray]] = {name: [] for name in ("doc_id", "exact", "bands", "band_rows", "rank",
                                                                  "quality")}
    rows = 0
    with signature_writer(root, shard, info.rows, cfg.num_perm) as sink:
        for batch in iter_batches(Path(input_dir), info):
            for start in range(0, batch.num_rows, SIGNATURE_BATCH_DOCS):
                part = batch.slice(start, SIGNATURE_BATCH_DOCS)
                texts = part.column("text").to_pylist()
                sigs = signatures(*shingle_hashes(texts, cfg.shingle_size), cfg.num_perm, cfg.seed)
                sink.write(sigs.tobytes())
                keys, key_rows = signature_band_keys(sigs, rows, cfg)
                columns["bands"].append(keys)
                columns["band_rows"].append(key_rows)
                columns["doc_id"].append(part.column("doc_id").to_numpy())
                columns["exact"].append(np.array(exact_keys(texts), dtype="S16"))
                columns["rank"].append(np.array([rank.get(c, len(rank)) for c in part.column("category").to_pylist()],
                                                dtype=np.int16))
                columns["quality"].append(_quality(part, cfg.quality_signal))
                rows += part.num_rows
        if rows != info.rows:
            raise KilnError(f"dedup: input shard {info.path} holds {rows:,} rows, its manifest says {info.rows:,}")
    dtypes = {"doc_id": np.int64, "exact": "S16", "bands": np.uint64, "band_rows": np.int32, "rank": np.int16,
              "quality": np.float64}
    arrays = {name: np.concatenate(parts) if parts else np.zeros(0, dtypes[name]) for name, parts in columns.items()}
    write_signature_outputs(root, shard, arrays["doc_id"], arrays["exact"], arrays["bands"], arrays["band_rows"],
                            arrays["rank"], arrays["quality"], cfg)
    return rows


def _candidate_similarity(work: Path, edges: np.ndarray, doc_id: np.ndarray, shard: np.ndarray,
                          row: np.ndarray) -> np.ndarray:
    """Signature Jaccard estimate of each candidate edge, reading only its two signature rows, SIMILARITY_BATCH_EDGES
    edges at a time (each shard's signature file mapped only while its rows of the batch are read)."""
    similarity = np.zeros(len(edges))
    if not len(edges):
        return similarity
    order = np.argsort(doc_id, kind="stable")
    at = order[np.searchsorted(doc_id[order], edges.ravel())]
    ends_shard, ends_row = shard[at].reshape(-1, 2), row[at].reshape(-1, 2)
    for start in range(0, len(edges), SIMILARITY_BATCH_EDGES):
        batch_shard = ends_shard[start:start + SIMILARITY_BATCH_EDGES].ravel()
        batch_row = ends_row[start:start + SIMILARITY_BATCH_EDGES].ravel()
        both = None
        for number in np.unique(batch_shard):
            here = batch_shard == number
            sigs = np.load(signature_path(work, int(number)), mmap_mode="r")
            if both is None:
                both = np.empty((batch_shard.size, sigs.shape[1]), dtype=sigs.dtype)
            both[here] = sigs[batch_row[here]]
            del sigs
        similarity[start:start + len(both) // 2] = (both[0::2] == both[1::2]).mean(axis=1)
    return similarity


def lsh_partition_task(work: str, partition: int, cfg: DedupConfig) -> dict:
    """The duplicate graph's edges from one partition: verified band-bucket stars and exact-key stars."""
    root = Path(work)

    def run() -> dict:
        bands = read_partition(root / LSH_DIR / "bands", partition, BAND_COLUMNS)
        candidates = star_edges(bands["doc_id"], bands["key"]).reshape(-1, 2)
        similarity = _candidate_similarity(root, candidates, bands["doc_id"], bands["shard"], bands["row"])
        near = candidates[similarity >= cfg.threshold]
        exact = read_partition(root / LSH_DIR / "exact", partition, EXACT_COLUMNS)
        _, group = np.unique(exact["key"], return_inverse=True)
        same = star_edges(exact["doc_id"], group.astype(np.uint64)).reshape(-1, 2)
        edges = np.concatenate([near, same])[:, ::-1]  # star_edges gives (centre, leaf): centre is the smaller id
        write_edges_to_both_ends(round_dir(root / GRAPH_DIR, 0) / "in", f"from-lsh-{partition:05d}", edges,
                                 cfg.partitions)
        return {"candidates": len(candidates), "near_edges": len(near), "exact_edges": len(same)}

    return once(root / LSH_DIR / f"done-{partition:05d}.json", run)


def members_task(work: str, final_round: int, partition: int, partitions: int) -> dict:
    """Each clustered document of one node partition with its component label, routed to the label's partition."""
    root = Path(work)

    def run() -> dict:
        edges = read_partition(round_dir(root / GRAPH_DIR, final_round) / "in", partition, EDGE_COLUMNS)
        nodes, labels = star_labels(np.stack([edges["high"], edges["low"]], axis=1), owned_by(partition, partitions))
        docs = read_partition(root / NODE_DIR, partition, NODE_COLUMNS)
        order = np.argsort(docs["doc_id"], kind="stable")
        at = order[np.searchsorted(docs["doc_id"][order], nodes)] if nodes.size else np.zeros(0, np.int64)
        if nodes.size and not np.array_equal(docs["doc_id"][at], nodes):
            raise KilnError(f"dedup: the duplicate graph under {root / GRAPH_DIR} names documents the signature "
                            "step never saw; rerun dedup with --force")
        write_partitioned(root / MEMBER_DIR, f"from-{partition:05d}", node_partition(labels, partitions), partitions,
                          label=labels, **{name: docs[name][at] for name in NODE_COLUMNS})
        return {"clustered": int(nodes.size)}

    return once(root / MEMBER_DIR / f"done-{partition:05d}.json", run)


def keep_decision(members: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One kept document per cluster (label): the lowest category rank, then the highest quality, then the
    lowest doc id. Returns, per member, its kept_id, reason (KEEP/EXACT/NEAR) and cluster_size."""
    label, doc_id, exact = members["label"], members["doc_id"], members["exact"]
    best = np.lexsort((doc_id, -members["quality"], members["category_rank"], label))
    starts = np.flatnonzero(np.r_[True, label[best][1:] != label[best][:-1]]) if label.size else np.zeros(0, int)
    group = np.empty(label.size, dtype=np.int64)
    group[best] = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, label.size]))
    keeper = best[starts][group]
    reason = np.where(keeper == np.arange(label.size), KEEP, np.where(exact == exact[keeper], EXACT, NEAR))
    return {"doc_id": doc_id, "kept_id": doc_id[keeper], "reason": reason.astype(np.int8),
            "cluster_size": np.diff(np.r_[starts, label.size]).astype(np.int32)[group]}


def keepers_task(work: str, partition: int) -> dict:
    """Keep decisions for the clusters whose labels fall in one partition, routed to each member's shard."""
    root = Path(work)

    def run() -> dict:
        members = read_partition(root / MEMBER_DIR, partition, MEMBER_COLUMNS)
        decided = keep_decision(members)
        shards = members["shard"]
        write_partitioned(root / DECISION_DIR, f"from-{partition:05d}", shards, int(shards.max()) + 1 if shards.size
                          else 0, **decided)
        counts = Counter(decided["reason"].tolist())
        return {"exact_dup": counts.get(EXACT, 0), "near_dup": counts.get(NEAR, 0)}

    return once(root / MEMBER_DIR / f"kept-{partition:05d}.json", run)


def decide_clusters(work: Path, shards: int, cfg: KilnConfig, log: logging.Logger,
                    run: TaskRunner = run_tasks) -> dict:
    """From the signature step's routed files under ``work``: edges, components and keep decisions.

    Returns the counts the driver logs; every per-document result stays in files under ``work``.
    ``run`` runs each step's tasks (Ray by default; bench/dedup_global.py runs them one by one)."""
    dcfg = cfg.dedup
    calls = [(str(work), p, dcfg) for p in range(dcfg.partitions)]
    found = run(lsh_partition_task, calls, cfg, "dedup LSH partitions", log, "dedup.partition")
    final_round = connected_components(work / GRAPH_DIR, cfg, log, run)
    calls = [(str(work), final_round, q, dcfg.partitions) for q in range(dcfg.partitions)]
    members = run(members_task, calls, cfg, "dedup cluster members", log, "dedup.members")
    calls = [(str(work), q) for q in range(dcfg.partitions)]
    removed = run(keepers_task, calls, cfg, "dedup keep decisions", log, "dedup.keepers")
    return {"shards": shards, "clustered": sum(r["clustered"] for r in members), "rounds": final_round,
            **{key: sum(r[key] for r in found) for key in ("candidates", "near_edges", "exact_edges")},
            **{name: sum(r[name] for r in removed) for name in REASONS.values()}}


def plan(cfg: KilnConfig, input_dir: Path | None) -> Plan:
    """One unit per input shard; the input's description names the evaluation sets (their files' sha256) too, so
    another set reruns the stage."""
    shards = shard_plan(cfg, input_dir)
    dcfg = cfg.decontaminate
    sets = {str(path): {str(file): file_sha256(file) for file in set_files(path)} for path in eval_set_paths(dcfg)} \
        if dcfg.enabled else {}
    return Plan(shards.units, {**shards.input, "decontaminate": {**dcfg.model_dump(mode="json"), "files": sets}})


def prepare(cfg: KilnConfig, input_dir: Path | None, stage_dir: Path, log: logging.Logger) -> None:
    """Signatures, LSH partitions, components and keep decisions, each task resumed from what is on disk; then the
    evaluation sets' index."""
    work = stage_dir / WORK_DIR
    if cfg.decontaminate.enabled and not (work / INDEX_NAME).exists():
        index = build_index(cfg.decontaminate)
        work.mkdir(parents=True, exist_ok=True)
        index.save(work)
        log.info("dedup: decontamination against %s: %d items, %d too short to match, %d common n-grams ignored",
                 ", ".join(sorted({f.set_name for f in index.files})), len(index.items),
                 sum(index.skipped.values()), index.common_ngrams)
    if (work / DECIDED).exists():
        return
    manifest = require_manifest(input_dir)
    reused = sum(ids_path(work, i).exists() for i in range(len(manifest.shards)))
    if reused:
        log.info("dedup: reusing %d of %d signature files", reused, len(manifest.shards))
    calls = [(str(input_dir), info.to_dict(), i, str(work), cfg.dedup) for i, info in enumerate(manifest.shards)]
    docs = sum(run_tasks(signature_task, calls, cfg, "dedup signatures", log, "dedup.signature"))
    summary = {"documents": docs, **decide_clusters(work, len(manifest.shards), cfg, log)}
    log.info("dedup: %(documents)d documents, %(near_edges)d verified near-duplicate edges, %(clustered)d in "
             "duplicate clusters: %(exact_dup)d exact and %(near_dup)d near duplicates to remove", summary)
    fault_point("dedup.decisions")
    atomic_write_json(work / DECIDED, summary)


def shard_decisions(work: Path, shard: int) -> dict[str, np.ndarray]:
    """The keep decisions of one shard's clustered documents, sorted by doc id (unlisted documents are kept)."""
    decided = read_partition(work / DECISION_DIR, shard, DECISION_COLUMNS)
    order = np.argsort(decided["doc_id"], kind="stable")
    return {name: column[order] for name, column in decided.items()}


def process(unit: WorkUnit, ctx: UnitContext) -> None:
    """Copy one input shard, keeping one document per duplicate cluster."""
    work = ctx.stage_dir / WORK_DIR
    seen = np.sort(np.load(ids_path(work, unit.index))["doc_id"])
    decided = shard_decisions(work, unit.index)
    listed_ids, kept_ids = decided["doc_id"], decided["kept_id"]
    for batch in iter_batches(ctx.input_dir, ShardInfo(**unit.spec["shard"])):
        ctx.count_in(batch.num_rows)
        ids = batch.column("doc_id").to_numpy()
        if not np.isin(ids, seen).all():
            raise KilnError(f"dedup: {unit.spec['shard']['path']} holds documents its signature step never saw; "
                            "rerun dedup with --force")
        reason, size, kept = np.full(ids.size, KEEP, np.int8), np.ones(ids.size, np.int32), ids.copy()
        if listed_ids.size:
            at = np.minimum(np.searchsorted(listed_ids, ids), listed_ids.size - 1)
            listed = np.flatnonzero(listed_ids[at] == ids)
            reason[listed] = decided["reason"][at[listed]]
            size[listed] = decided["cluster_size"][at[listed]]
            kept[listed] = kept_ids[at[listed]]
        table = pa.Table.from_batches([batch]).append_column("dup_cluster_size", pa.array(size, pa.int32()))
        _keep_uncontaminated(ctx, table.filter(pa.array(reason == KEEP)))
        for code, name in REASONS.items():
            rows = np.nonzero(reason == code)[0]
            if rows.size:
                part = table.take(pa.array(rows))
                ctx.drop(name, part, signal=[f"kept doc_id={k} (cluster of {s})" for k, s in
                                             zip(kept[rows], size[rows], strict=True)])
                langs = part.column("lang").to_pylist()
                cats = part.column("category").to_pylist()
                ctx.add_stats({f"removed_{name}_by_lang": dict(Counter(langs)),
                               f"removed_{name}_by_category": dict(Counter(cats))})
        kept_sizes = size[reason == KEEP]
        ctx.add_stats({"cluster_sizes": {str(s): int(c) for s, c in zip(*np.unique(kept_sizes, return_counts=True),
                                                                       strict=True)}})


def _keep_uncontaminated(ctx: UnitContext, table: pa.Table) -> None:
    """Keep ``table``'s documents but those sharing text with an evaluation item (or, mode excise, the matched text)."""
    if not ctx.cfg.decontaminate.enabled or table.num_rows == 0:
        ctx.keep(table)
        return
    done = decontaminate(table, ContaminationIndex.load(ctx.stage_dir / WORK_DIR), ctx.cfg.decontaminate)
    ctx.keep(done.kept)
    if done.removed.num_rows:
        ctx.drop(CONTAMINATED, done.removed, signal=done.signals)
    ctx.record(CUT_OUTPUT, done.cut)
    ctx.add_stats(done.stats)


def finalize(cfg: KilnConfig, stage_dir: Path, results: list[UnitResult], details: dict,
             log: logging.Logger) -> dict:
    """Write the decontamination report (per evaluation set: items found, documents and characters removed, the
    most-matched items)."""
    if not cfg.decontaminate.enabled:
        return {}
    summary = report(ContaminationIndex.load(stage_dir / WORK_DIR), cfg.decontaminate, details.get("decontamination", {}))
    for name, row in summary["sets"].items():
        log.info("dedup: %s: %d of %d items found in the corpus; %d documents removed, %d excised, %s characters",
                 name, row["items_found"], row["items"], row["documents"], row["excised_documents"],
                 f"{row['chars']:,}")
    atomic_write_json(stage_dir / DECONTAMINATION_REPORT, summary, indent=1)
    path = stage_dir / DECONTAMINATION_REPORT
    return {"decontamination": [ShardInfo(path=DECONTAMINATION_REPORT, rows=len(summary["sets"]), bytes=path.stat().st_size,
                                          sha256=file_sha256(path))]}


STAGE = MapStage(
    name="dedup", output_schema=input_schema_with(pa.field("dup_cluster_size", pa.int32())),
    plan=plan, process=process, prepare=prepare, finalize=finalize,
)
