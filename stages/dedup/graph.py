"""Connected components as distributed rounds: large-star and small-star Ray tasks over partitioned edge files.

Layout under ``graph/``: ``r-RRR/in/`` holds round R's edges, each canonical edge (larger, smaller)
routed to the partitions of both its endpoints, so the task of node partition q sees every edge
touching the nodes it owns. A large-star task reads ``in/p-q``, says whether its nodes already
form a star forest, and routes the large-star edges by their larger endpoint to ``large/``; a
small-star task reads ``large/p-q`` and routes its edges to both endpoints in ``r-(R+1)/in/``. The
rounds stop when every partition reports a star forest; round R's ``in/`` then labels every node
with its component's smallest id (``star_labels``). The driver keeps one flag per partition.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from common.config import KilnConfig
from common.errors import KilnError
from common.runner import TaskRunner, run_tasks
from stages.dedup.components import canonical, is_star_forest, large_star, small_star
from stages.dedup.shuffle import node_partition, once, read_partition, write_partitioned

EDGE_COLUMNS = {"high": "int64", "low": "int64"}
MAX_ROUNDS = 64


def round_dir(graph: Path, round_: int) -> Path:
    """The folder of one round's files."""
    return graph / f"r-{round_:03d}"


def owned_by(partition: int, partitions: int):
    """The ``owns`` predicate of one node partition."""
    return lambda ids: node_partition(ids, partitions) == partition


def write_edges_to_both_ends(root: Path, source: str, edges: np.ndarray, partitions: int) -> None:
    """Route canonical edges to the partitions of their larger and of their smaller endpoint."""
    high, low = edges[:, 0], edges[:, 1]
    to_high, to_low = node_partition(high, partitions), node_partition(low, partitions)
    both = to_high != to_low
    write_partitioned(root, source, np.concatenate([to_high, to_low[both]]), partitions,
                      high=np.concatenate([high, high[both]]), low=np.concatenate([low, low[both]]))


def read_edges(root: Path, partition: int) -> np.ndarray:
    """Every edge routed to ``partition`` under ``root``, canonical (duplicates from several sources removed)."""
    columns = read_partition(root, partition, EDGE_COLUMNS)
    return canonical(np.stack([columns["high"], columns["low"]], axis=1))


def large_star_task(graph: str, round_: int, partition: int, partitions: int) -> dict:
    """Large-star step of one node partition; returns whether its nodes form a star forest already."""
    here = round_dir(Path(graph), round_)

    def work() -> dict:
        edges = read_edges(here / "in", partition)
        owns = owned_by(partition, partitions)
        out = large_star(edges, owns)
        write_partitioned(here / "large", f"from-{partition:05d}", node_partition(out[:, 0], partitions),
                          partitions, high=out[:, 0], low=out[:, 1])
        return {"star": is_star_forest(edges, owns)}

    return once(here / f"large-{partition:05d}.json", work)


def small_star_task(graph: str, round_: int, partition: int, partitions: int) -> dict:
    """Small-star step of one node partition; its edges become the next round's input."""
    here = round_dir(Path(graph), round_)

    def work() -> dict:
        out = small_star(read_edges(here / "large", partition))
        write_edges_to_both_ends(round_dir(Path(graph), round_ + 1) / "in", f"from-{partition:05d}", out, partitions)
        return {"edges": len(out)}

    return once(here / f"small-{partition:05d}.json", work)


def connected_components(graph: Path, cfg: KilnConfig, log: logging.Logger, run: TaskRunner = run_tasks) -> int:
    """Run rounds until the edges under ``graph`` form a star forest; returns that round's number."""
    partitions = cfg.dedup.partitions
    for round_ in range(MAX_ROUNDS):
        calls = [(str(graph), round_, q, partitions) for q in range(partitions)]
        flags = run(large_star_task, calls, cfg, f"dedup components round {round_ + 1} (large-star)", log,
                          "dedup.large_star")
        if all(flag["star"] for flag in flags):
            log.info("dedup: the duplicate graph is a star forest after %d large-star/small-star rounds", round_)
            return round_
        run(small_star_task, calls, cfg, f"dedup components round {round_ + 1} (small-star)", log,
                  "dedup.small_star")
    raise KilnError(f"dedup: connected components did not converge in {MAX_ROUNDS} rounds under {graph}")
