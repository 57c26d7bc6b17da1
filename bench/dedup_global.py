"""Bench worker: time and measure the dedup stage's global step on one core, with its real functions.

Usage (started by bench/dedup.py):
  dedup_global.py partition SIG_DIR EDGE_DIR RESULT.json --partition P --partitions N --core C
  dedup_global.py decide SIG_DIR EDGE_DIR RESULT.json --method union_find|star_contraction --core C
  dedup_global.py steps DATA_DIR WORK_DIR RESULT.json --core C

``partition`` runs one ``partition_task`` over every signature file in SIG_DIR; ``decide`` does what
``prepare()`` does once the signatures and edges exist (load the edges and the per-document
columns, ``decide``, save the decisions); ``steps`` runs the whole of ``prepare()``'s work on
DATA_DIR/clean without Ray, step by step. Each records the RSS after its imports
(``baseline_rss_mb``), its peak RSS from then on (the peak is reset after the imports) and the
bytes it read (``rchar`` of /proc/self/io).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import numpy as np
from measure import peak_rss_mb, timed, worker_args, write_result

from common.config import load_config
from common.manifest import require_manifest
from stages.dedup.stage import _concat, _save_npz, decide, partition_task, signature_task


def bytes_read() -> int:
    """Bytes this process has read so far through read() and friends (page cache included)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise RuntimeError("/proc/self/io has no rchar line")


def reset_peak_rss() -> float:
    """Reset this process's peak RSS to its current RSS (Linux ``clear_refs``) and return that, in MiB."""
    Path("/proc/self/clear_refs").write_text("5")
    return peak_rss_mb()


def edge_files(edge_dir: Path) -> list[Path]:
    """The edge files partition_task wrote in ``edge_dir``, by partition."""
    return sorted(edge_dir.glob("p-*.npz"))


def run_partition(sig_dir: Path, edge_dir: Path, partition: int, partitions: int) -> dict:
    """One partition_task over every signature file in ``sig_dir``."""
    cfg = load_config(overrides=[f"dedup.partitions={partitions}"]).dedup
    files = [str(f) for f in sorted(sig_dir.glob("part-*.npz"))]
    edge_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    edges = partition_task(files, partition, cfg, str(edge_dir / f"p-{partition:04d}.npz"))
    return {"partition": partition, "partitions": partitions, "seconds": time.perf_counter() - start,
            "edges": edges}


def run_decide(sig_dir: Path, edge_dir: Path, method: str, out: Path) -> dict:
    """prepare()'s driver side: load edges and columns, decide, save the decisions."""
    files = sorted(sig_dir.glob("part-*.npz"))
    seconds: dict[str, float] = {}
    with timed(seconds, "load"):
        near_edges = _concat(edge_files(edge_dir), "edges").reshape(-1, 2).astype(np.int64)
        columns = [_concat(files, name) for name in ("doc_id", "exact", "category_rank", "quality")]
    unique_edges = len(np.unique(near_edges[:, 0] * columns[0].size + near_edges[:, 1]))
    rss_loaded = peak_rss_mb()
    with timed(seconds, "decide"):
        result = decide(columns[0], columns[1], near_edges, columns[2], columns[3], method)
    with timed(seconds, "save"):
        _save_npz(out, **result)
    reasons = Counter(result["reason"].tolist())
    return {"method": method, "docs": int(result["doc_id"].size), "near_edges": len(near_edges),
            "unique_near_edges": unique_edges,
            "clustered_docs": int((result["cluster_size"] > 1).sum()), "reasons": {str(k): v for k, v in reasons.items()},
            "parts_s": seconds, "seconds": sum(seconds.values()), "loaded_rss_mb": rss_loaded}


def run_steps(data_dir: Path, work: Path) -> dict:
    """prepare()'s three steps on DATA_DIR/clean, in this process: signatures, partitions, decide."""
    cfg = load_config().dedup
    input_dir = data_dir / "clean"
    manifest = require_manifest(input_dir)
    sig_dir, edge_dir = work / "signatures", work / "edges"
    sig_dir.mkdir(parents=True, exist_ok=True)
    edge_dir.mkdir(parents=True, exist_ok=True)
    files = [str(sig_dir / f"part-{i:05d}.npz") for i in range(len(manifest.shards))]
    seconds: dict[str, float] = {}
    with timed(seconds, "signature_tasks"):
        docs = sum(signature_task(str(input_dir), info.to_dict(), f, cfg)
                   for info, f in zip(manifest.shards, files, strict=True))
    with timed(seconds, "partition_tasks"):
        for p in range(cfg.partitions):
            partition_task(files, p, cfg, str(edge_dir / f"p-{p:04d}.npz"))
    decided = run_decide(sig_dir, edge_dir, cfg.components, work / "decisions.npz")
    seconds |= {f"driver_{name}": s for name, s in decided["parts_s"].items()}
    return {"docs": docs, "shards": len(files), "partitions": cfg.partitions, "parts_s": seconds,
            "signature_bytes": sum(Path(f).stat().st_size for f in files), "near_edges": decided["near_edges"],
            "unique_near_edges": decided["unique_near_edges"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["partition", "decide", "steps"])
    parser.add_argument("source", type=Path, help="SIG_DIR (partition, decide) or DATA_DIR (steps)")
    parser.add_argument("work", type=Path, help="EDGE_DIR (partition, decide) or WORK_DIR (steps)")
    parser.add_argument("result", type=Path)
    parser.add_argument("--partition", type=int, default=0)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--method", default="union_find")
    args = worker_args(parser)
    baseline, read_before = reset_peak_rss(), bytes_read()
    if args.mode == "partition":
        figures = run_partition(args.source, args.work, args.partition, args.partitions)
    elif args.mode == "decide":
        figures = run_decide(args.source, args.work, args.method, args.result.with_suffix(".npz"))
    else:
        figures = run_steps(args.source, args.work)
    write_result(args.result, figures | {"baseline_rss_mb": baseline, "read_bytes": bytes_read() - read_before})


if __name__ == "__main__":
    main()
