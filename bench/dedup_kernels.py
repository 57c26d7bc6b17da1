"""Bench worker: time MinHash signatures on one core, Kiln's kernel or datasketch as its docs show.

Usage (started by bench/dedup.py):
  dedup_kernels.py {kiln,datasketch} TEXTS.jsonl PAIRS.json RESULT.json --core N --warmup N

Both sides tokenize as ``common.text`` does (5-token shingles, 128 permutations). After the timed
pass, the worker writes each side's Jaccard estimate of every (row, row) pair in PAIRS.json.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from datasketch import MinHash
from measure import read_texts, timed, worker_args, write_result

from common.text import dedup_tokens, shingles
from stages.dedup.minhash import estimate_jaccard_rows, shingle_hashes, signatures

NUM_PERM = 128
SHINGLE_SIZE = 5
SEED = 1


def kiln_signatures(texts: list[str], seconds: dict[str, float]) -> np.ndarray:
    """Kiln's signatures of ``texts`` (docs x NUM_PERM), shingling and MinHash timed apart."""
    with timed(seconds, "shingle_hashes"):
        hashes, offsets = shingle_hashes(texts, SHINGLE_SIZE)
    with timed(seconds, "signatures"):
        return signatures(hashes, offsets, NUM_PERM, SEED)


def datasketch_signatures(texts: list[str], seconds: dict[str, float]) -> list[MinHash]:
    """One datasketch MinHash per text, fed with ``update_batch`` of its UTF-8 shingles."""
    out = []
    with timed(seconds, "minhash"):
        for text in texts:
            minhash = MinHash(num_perm=NUM_PERM)
            minhash.update_batch([s.encode("utf-8") for s in shingles(dedup_tokens(text), SHINGLE_SIZE)])
            out.append(minhash)
    return out


def run_side(side: str, texts: list[str], pairs: list[list[int]], warmup: int) -> dict:
    """Warm up, time one pass over ``texts``, then estimate the Jaccard of every pair."""
    compute = kiln_signatures if side == "kiln" else datasketch_signatures
    start = time.perf_counter()
    compute(texts[:warmup], {})
    warmup_s = time.perf_counter() - start
    seconds: dict[str, float] = {}
    sigs = compute(texts, seconds)
    if side == "kiln":
        estimates = estimate_jaccard_rows(sigs, np.array(pairs, dtype=np.int64).reshape(-1, 2)).tolist()
    else:
        estimates = [sigs[a].jaccard(sigs[b]) for a, b in pairs]
    return {"side": side, "docs": len(texts), "warmup_s": warmup_s, "seconds": sum(seconds.values()),
            "parts_s": seconds, "estimates": estimates}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("side", choices=["kiln", "datasketch"])
    parser.add_argument("texts", type=Path)
    parser.add_argument("pairs", type=Path)
    parser.add_argument("result", type=Path)
    args = worker_args(parser, warmup=True)
    texts = read_texts(args.texts)
    pairs = json.loads(args.pairs.read_text(encoding="utf-8"))
    write_result(args.result, run_side(args.side, texts, pairs, args.warmup))


if __name__ == "__main__":
    main()
