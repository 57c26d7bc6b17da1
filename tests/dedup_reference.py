"""The dedup decisions computed on one node, the way the stage did before its steps were distributed.

Every shard's band keys at once, one star per bucket, verified by the signature Jaccard; exact-key
groups; connected components by scipy; the keep rule over the whole corpus. Tests compare the
distributed stage with it document by document.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from stages.dedup.config import DedupConfig
from stages.dedup.lsh import band_keys, star_edges
from stages.dedup.minhash import EMPTY
from stages.dedup.shuffle import read_partition
from stages.dedup.stage import EXACT, KEEP, NEAR, NODE_COLUMNS, NODE_DIR, ids_path, signature_path


def component_labels(num_nodes: int, edges: np.ndarray) -> np.ndarray:
    """Each node's component, labelled by its smallest node (scipy)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    graph = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(num_nodes, num_nodes))
    _, component = connected_components(graph, directed=False)
    smallest = np.full(component.max() + 1 if num_nodes else 0, num_nodes, dtype=np.int64)
    np.minimum.at(smallest, component, np.arange(num_nodes))
    return smallest[component]


def single_node_decisions(work: Path, shards: int, cfg: DedupConfig) -> dict[str, np.ndarray]:
    """Per document (sorted by doc id): kept_id, reason and cluster_size, all on one node."""
    doc_id = np.concatenate([np.load(ids_path(work, s))["doc_id"] for s in range(shards)])
    sigs = np.concatenate([np.load(signature_path(work, s)) for s in range(shards)])
    columns = [read_partition(work / NODE_DIR, p, NODE_COLUMNS) for p in range(cfg.partitions)]
    nodes = {name: np.concatenate([c[name] for c in columns]) for name in NODE_COLUMNS}
    order = np.argsort(nodes["doc_id"])
    nodes = {name: column[order] for name, column in nodes.items()}
    assert np.array_equal(nodes["doc_id"], np.sort(doc_id))
    by_id = np.argsort(doc_id)
    doc_id, sigs = doc_id[by_id], sigs[by_id]
    n = doc_id.size

    shingled = ~(sigs == EMPTY).all(axis=1)
    keys = band_keys(sigs[shingled], cfg.bands, cfg.rows)
    rows = np.repeat(np.flatnonzero(shingled), cfg.bands)
    candidates = star_edges(rows, keys.ravel())
    similarity = (sigs[candidates[:, 0]] == sigs[candidates[:, 1]]).mean(axis=1) if len(candidates) else np.zeros(0)
    near = candidates[similarity >= cfg.threshold]
    _, group = np.unique(nodes["exact"], return_inverse=True)
    exact = star_edges(np.arange(n), group.astype(np.uint64))
    labels = component_labels(n, np.concatenate([near, exact]))

    rank, quality = nodes["category_rank"], nodes["quality"]
    best = np.lexsort((np.arange(n), -quality, rank, labels))
    first = np.r_[True, labels[best][1:] != labels[best][:-1]]
    keeper_of = np.empty(n, dtype=np.int64)
    keeper_of[labels[best][first]] = best[first]
    keeper = keeper_of[labels]
    reason = np.where(keeper == np.arange(n), KEEP, np.where(nodes["exact"] == nodes["exact"][keeper], EXACT, NEAR))
    return {"doc_id": doc_id, "kept_id": doc_id[keeper], "reason": reason.astype(np.int8),
            "cluster_size": np.bincount(labels, minlength=n)[labels].astype(np.int32)}
