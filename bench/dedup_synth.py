"""Bench worker: synthetic dedup signature files for N documents, shaped like ``signature_task``'s.

Usage (started by bench/dedup.py): dedup_synth.py OUT_DIR RESULT.json --docs N --shard-docs N --core N

Writes OUT_DIR/part-NNNNN.npz with the keys and dtypes of stages/dedup/stage.py's signature files
(band keys by the real ``band_keys``, saved by the real ``_save_npz``). Random signatures, with
planted copies of earlier documents: near duplicates (a few signature positions redrawn, another
exact key) and exact duplicates (same signature and exact key); a few documents without shingles.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from measure import worker_args, write_result

from common.config import load_config
from stages.dedup.lsh import band_keys
from stages.dedup.minhash import EMPTY
from stages.dedup.stage import _save_npz

NEAR_RATE = 0.05
EXACT_RATE = 0.05
NO_SHINGLE_RATE = 0.01
CHANGED_POSITIONS = (4, 20)


def plant(sigs: np.ndarray, exact: np.ndarray, rng: np.random.Generator) -> dict[str, int]:
    """Overwrite random documents with copies of earlier ones, in place.

    A near duplicate redraws each signature position with a probability drawn from
    ``CHANGED_POSITIONS`` / num_perm and gets its own exact key; an exact duplicate copies both.
    """
    n, num_perm = sigs.shape
    copies = rng.choice(np.arange(1, n), size=int(n * (NEAR_RATE + EXACT_RATE)), replace=False)
    near, exact_copies = copies[: int(n * NEAR_RATE)], copies[int(n * NEAR_RATE):]
    sources = (rng.random(near.size) * near).astype(np.int64)
    block = sigs[sources]
    rate = rng.uniform(*CHANGED_POSITIONS, size=near.size) / num_perm
    changed = rng.random(block.shape) < rate[:, None]
    block[changed] = rng.integers(0, EMPTY, size=int(changed.sum()), dtype=np.uint64)
    sigs[near] = block
    sources = (rng.random(exact_copies.size) * exact_copies).astype(np.int64)
    sigs[exact_copies] = sigs[sources]
    exact[exact_copies] = exact[sources]
    return {"near_dup": int(near.size), "exact_dup": int(exact_copies.size)}


def synthesize(out_dir: Path, docs: int, shard_docs: int, seed: int) -> dict:
    """Write the signature files and return what was planted and written."""
    cfg = load_config().dedup
    rng = np.random.default_rng(seed)
    sigs = rng.integers(0, EMPTY, size=(docs, cfg.num_perm), dtype=np.uint64)
    exact = np.frombuffer(rng.bytes(16 * docs), dtype="S16").copy()
    planted = plant(sigs, exact, rng)
    has_shingles = rng.random(docs) >= NO_SHINGLE_RATE
    sigs[~has_shingles] = EMPTY
    category_rank = rng.integers(0, len(cfg.category_priority), size=docs).astype(np.int16)
    quality = rng.random(docs)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = []
    for number, low in enumerate(range(0, docs, shard_docs)):
        rows = slice(low, min(low + shard_docs, docs))
        path = out_dir / f"part-{number:05d}.npz"
        _save_npz(path, doc_id=np.arange(rows.start, rows.stop, dtype=np.int64), exact=exact[rows], sig=sigs[rows],
                  bands=band_keys(sigs[rows], cfg.bands, cfg.rows), has_shingles=has_shingles[rows],
                  category_rank=category_rank[rows], quality=quality[rows])
        files.append(path.stat().st_size)
    return {"docs": docs, "files": len(files), "shard_docs": shard_docs, "bytes": sum(files),
            "planted": planted | {"no_shingles": int((~has_shingles).sum())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("result", type=Path)
    parser.add_argument("--docs", type=int, required=True)
    parser.add_argument("--shard-docs", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = worker_args(parser)
    write_result(args.result, synthesize(args.out_dir, args.docs, args.shard_docs, args.seed))


if __name__ == "__main__":
    main()
