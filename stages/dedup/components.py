"""Connected components of the duplicate graph by large-star / small-star rounds over its edge list.

Kiwi et al., "Connected Components in MapReduce and Beyond" (SoCC 2014). Nodes are int64 document
ids. The state is the edge list alone; a round rewrites it until it is a forest of stars centred on
each component's smallest node, and then each star edge (leaf, centre) gives the leaf's label:

* large-star: every edge in both directions, grouped by source node u; for each neighbour v > u,
  emit (v, m(u)), m(u) the smallest of u and its neighbours;
* small-star: every edge keyed by its larger endpoint u; emit (v, m(u)) for u and each smaller
  neighbour v;
* the emitted edges are deduplicated and form the next round's input, until the edges form a star
  forest. Rounds grow O(log n) in practice (O(log^2 n) proven).

Each step is a group-by by node, so it runs per partition of the nodes: ``large_star`` and
``is_star_forest`` take an ``owns`` predicate and look only at the nodes a partition owns (its input
must hold every edge touching them); ``small_star`` needs every edge whose larger endpoint it owns.
stages/dedup/graph.py runs them as Ray tasks over partitioned edge files.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Owns = Callable[[np.ndarray], np.ndarray]
"""Maps node ids to a boolean mask: True for the nodes the calling partition owns."""


def canonical(pairs: np.ndarray) -> np.ndarray:
    """Undirected edges as unique (larger, smaller) int64 rows, sorted by larger then smaller; self loops dropped."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    high, low = np.maximum(pairs[:, 0], pairs[:, 1]), np.minimum(pairs[:, 0], pairs[:, 1])
    high, low = high[high != low], low[high != low]
    order = np.lexsort((low, high))
    high, low = high[order], low[order]
    first = np.ones(len(high), dtype=bool)
    first[1:] = (high[1:] != high[:-1]) | (low[1:] != low[:-1])
    return np.stack([high[first], low[first]], axis=1)


def _group_starts(keys: np.ndarray) -> np.ndarray:
    """Start index of each run of equal values in sorted ``keys``."""
    return np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])


def _directed(edges: np.ndarray, owns: Owns | None) -> tuple[np.ndarray, np.ndarray]:
    """Every edge in both directions as (source, destination), sorted by source; only owned sources."""
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    if owns is not None:
        mine = owns(src)
        src, dst = src[mine], dst[mine]
    order = np.argsort(src, kind="stable")
    return src[order], dst[order]


def large_star(edges: np.ndarray, owns: Owns | None = None) -> np.ndarray:
    """Link every neighbour v > u of each (owned) node u to m(u), the smallest of u and its neighbours."""
    src, dst = _directed(canonical(edges), owns)
    if not len(src):
        return np.zeros((0, 2), np.int64)
    starts = _group_starts(src)
    smallest = np.repeat(np.minimum.reduceat(dst, starts), np.diff(np.r_[starts, len(src)]))
    center = np.minimum(smallest, src)
    larger = dst > src
    return canonical(np.stack([dst[larger], center[larger]], axis=1))


def small_star(edges: np.ndarray) -> np.ndarray:
    """Link each node u and its smaller neighbours to the smallest of them (every edge of each u given)."""
    edges = canonical(edges)
    if not len(edges):
        return edges
    high, low = edges[:, 0], edges[:, 1]
    starts = _group_starts(high)
    center = np.repeat(low[starts], np.diff(np.r_[starts, len(high)]))
    pairs = np.concatenate([np.stack([low, center], axis=1), np.stack([high[starts], low[starts]], axis=1)])
    return canonical(pairs)


def is_star_forest(edges: np.ndarray, owns: Owns | None = None) -> bool:
    """True when every (owned) node has at most one smaller neighbour, and none with one has a larger one."""
    edges = canonical(edges)
    high, low = edges[:, 0], edges[:, 1]
    if owns is not None:
        high, low = high[owns(high)], low[owns(low)]
    return bool(np.all(high[1:] != high[:-1])) and not np.isin(low, high).any()


def star_labels(edges: np.ndarray, owns: Owns | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(node, label) of every (owned) node of a star forest: the leaf's centre, or the centre itself."""
    src, dst = _directed(canonical(edges), owns)
    if not len(src):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = _group_starts(src)
    return src[starts], np.minimum(src[starts], np.minimum.reduceat(dst, starts))
