"""Bench worker: a synthetic corpus's dedup signature outputs, written by the real ``write_signature_outputs``.

Usage (started by bench/dedup.py):
  dedup_synth.py WORK_DIR RESULT.json --docs N --shard-docs N --partitions P --core C

Generates one shard at a time (memory bounded by one shard and the one before it) and writes it
with stages/dedup/stage.py's ``write_signature_outputs`` into WORK_DIR, as the signature step
leaves its ``_work`` folder for P partitions. Random signatures, with planted copies of documents
of the same or the previous shard (so clusters cross shards, and chains can form): near
duplicates (a few signature positions redrawn, their own exact key) and exact duplicates (same
signature and exact key); a few documents without shingles. Doc ids are
``shard * DOC_ID_STRIDE + row``. Records what was planted, the seconds spent in
``write_signature_outputs`` and the bytes and files written per folder.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from measure import worker_args, write_result

from common.config import load_config
from common.schema import DOC_ID_STRIDE
from stages.dedup.config import DedupConfig
from stages.dedup.minhash import EMPTY
from stages.dedup.stage import (
    LSH_DIR,
    NODE_DIR,
    SIGNATURE_DIR,
    signature_band_keys,
    signature_writer,
    write_signature_outputs,
)

NEAR_RATE = 0.05
EXACT_RATE = 0.05
NO_SHINGLE_RATE = 0.01
CHANGED_POSITIONS = (4, 20)


class Shard:
    """One synthetic shard's per-document columns."""

    def __init__(self, rng: np.random.Generator, rows: int, cfg: DedupConfig):
        self.sigs = rng.integers(0, EMPTY, size=(rows, cfg.num_perm), dtype=np.uint64)
        self.exact = np.frombuffer(rng.bytes(16 * rows), dtype="S16").copy()
        self.sigs[rng.random(rows) < NO_SHINGLE_RATE] = EMPTY
        self.category_rank = rng.integers(0, len(cfg.category_priority), size=rows).astype(np.int16)
        self.quality = rng.random(rows)

    @property
    def has_shingles(self) -> np.ndarray:
        return ~(self.sigs == EMPTY).all(axis=1)


def plant(shard: Shard, previous: Shard | None, rng: np.random.Generator) -> dict[str, int]:
    """Overwrite random rows of ``shard`` with copies of originals of ``shard`` or ``previous``, in place.

    The sources are the previous shard's rows (copies included, so chains cross shards) and this
    shard's rows that are not copies. A near duplicate redraws each signature position with a
    probability drawn from ``CHANGED_POSITIONS`` / num_perm and keeps its own exact key; its
    source has shingles. An exact duplicate copies the signature and the exact key.
    """
    rows, num_perm = shard.sigs.shape
    copies = rng.permutation(rows)[: int(rows * (NEAR_RATE + EXACT_RATE))]
    near, exact = copies[: int(rows * NEAR_RATE)], copies[int(rows * NEAR_RATE):]
    originals = np.setdiff1d(np.arange(rows), copies)
    pool_sigs, pool_exact = shard.sigs[originals], shard.exact[originals]
    if previous is not None:
        pool_sigs = np.concatenate([previous.sigs, pool_sigs])
        pool_exact = np.concatenate([previous.exact, pool_exact])
    shingled = np.flatnonzero(~(pool_sigs == EMPTY).all(axis=1))
    block = pool_sigs[shingled[rng.integers(0, shingled.size, size=near.size)]]
    rate = rng.uniform(*CHANGED_POSITIONS, size=near.size) / num_perm
    changed = rng.random(block.shape) < rate[:, None]
    block[changed] = rng.integers(0, EMPTY, size=int(changed.sum()), dtype=np.uint64)
    shard.sigs[near] = block
    sources = rng.integers(0, len(pool_sigs), size=exact.size)
    shard.sigs[exact], shard.exact[exact] = pool_sigs[sources], pool_exact[sources]
    return {"near_dup": int(near.size), "exact_dup": int(exact.size)}


def folder_sizes(root: Path) -> dict[str, dict[str, int]]:
    """Bytes and count of the files under each top folder of ``root``."""
    sizes = {}
    for folder in sorted(f for f in root.iterdir() if f.is_dir()):
        files = [f.stat().st_size for f in folder.rglob("*") if f.is_file()]
        sizes[folder.name] = {"bytes": sum(files), "files": len(files)}
    return sizes


def synthesize(work: Path, docs: int, shard_docs: int, partitions: int, seed: int) -> dict:
    """Write the signature outputs shard by shard and return what was planted and written."""
    cfg = load_config(overrides=[f"dedup.partitions={partitions}"]).dedup
    rng = np.random.default_rng(seed)
    planted = {"near_dup": 0, "exact_dup": 0, "no_shingles": 0}
    starts = range(0, docs, shard_docs)
    previous, write_s = None, 0.0
    for index, low in enumerate(starts):
        shard = Shard(rng, min(shard_docs, docs - low), cfg)
        for name, count in plant(shard, previous, rng).items():
            planted[name] += count
        has_shingles = shard.has_shingles
        planted["no_shingles"] += int((~has_shingles).sum())
        doc_id = index * DOC_ID_STRIDE + np.arange(len(shard.sigs), dtype=np.int64)
        start = time.perf_counter()
        with signature_writer(work, index, len(shard.sigs), cfg.num_perm) as sink:
            sink.write(shard.sigs.tobytes())
        write_signature_outputs(work, index, doc_id, shard.exact, *signature_band_keys(shard.sigs, 0, cfg),
                                shard.category_rank, shard.quality, cfg)
        write_s += time.perf_counter() - start
        previous = shard
    sizes = folder_sizes(work) | folder_sizes(work / LSH_DIR)
    return {"docs": docs, "shards": len(starts), "shard_docs": shard_docs, "partitions": partitions,
            "planted": planted, "write_s": write_s,
            "written": {name: sizes[name] for name in (SIGNATURE_DIR, "bands", "exact", NODE_DIR)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("work", type=Path)
    parser.add_argument("result", type=Path)
    parser.add_argument("--docs", type=int, required=True)
    parser.add_argument("--shard-docs", type=int, required=True)
    parser.add_argument("--partitions", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = worker_args(parser)
    write_result(args.result, synthesize(args.work, args.docs, args.shard_docs, args.partitions, args.seed))


if __name__ == "__main__":
    main()
