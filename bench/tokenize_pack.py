"""The tokenize stage's packer: memory per document and per token, and its time, at growing corpus sizes.

Run from anywhere with Kiln's environment:
  .venv/bin/python bench/tokenize_pack.py [--docs 250000,1000000,2000000] [--tokens-per-doc 400] [--core N]

For each size, writes unit shards of synthetic documents (random token ids, lengths uniform in
[1, 2 × --tokens-per-doc), repeat 1-3) with the stage's schema, then runs the real ``pack_split`` in
a fresh process pinned to one core. That process resets its peak RSS after its imports
(``/proc/self/clear_refs``) and reads ``VmHWM`` from ``/proc/self/status`` afterwards, so the figure
is the packer's own memory above the interpreter and its libraries.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
from measure import add_core_argument, log, pin_to_core

from common.files import file_sha256
from common.runner import WORK_DIR
from common.shards import ShardInfo
from stages.tokenize.config import TokenizeConfig
from stages.tokenize.pack import pack_split
from stages.tokenize.stage import TOKENS_SCHEMA

SHARD_DOCS = 100_000


def vm_kib(field: str) -> int:
    """A ``Vm*`` line of /proc/self/status, in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def write_units(folder: Path, docs: int, tokens_per_doc: int, seed: int) -> list[ShardInfo]:
    """Unit shards of ``docs`` synthetic documents, as the encode units write them."""
    rng = np.random.default_rng(seed)
    infos = []
    for number, low in enumerate(range(0, docs, SHARD_DOCS)):
        n = min(SHARD_DOCS, docs - low)
        lengths = rng.integers(1, 2 * tokens_per_doc, size=n)
        flat = rng.integers(2, 32000, size=int(lengths.sum()), dtype=np.uint16)
        offsets = np.r_[0, np.cumsum(lengths)].astype(np.int32)
        table = pa.table({
            "doc_id": pa.array(np.arange(low, low + n, dtype=np.int64)), "split": pa.array(["train"] * n),
            "category": pa.array(["news"] * n).dictionary_encode(), "source": pa.array(["bench"] * n),
            "lang": pa.array(["en"] * n), "repeat": pa.array(rng.integers(1, 4, size=n).astype(np.int32)),
            "tokens": pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat)),
        }).cast(TOKENS_SCHEMA)
        path = folder / f"part-{number:05d}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, TOKENS_SCHEMA) as writer:
            writer.write_table(table)
        infos.append(ShardInfo(path=path.name, rows=n, bytes=path.stat().st_size, sha256=file_sha256(path)))
    return infos


def measure_pack(folder: Path, shards: list[dict]) -> dict:
    """Run pack_split on the shards in this process; its time and the peak memory above the baseline."""
    baseline = vm_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    start = time.perf_counter()
    _, tally = pack_split(folder, "train", [ShardInfo(**s) for s in shards], 1234, max_documents=10**12)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_mb": (vm_kib("VmHWM") - baseline) / 1024, "documents": tally["documents"],
            "unique_documents": tally["unique_documents"], "tokens": tally["tokens"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", default="250000,1000000,2000000", help="corpus sizes, comma-separated")
    parser.add_argument("--tokens-per-doc", type=int, default=400, help="mean tokens per document (default 400)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    add_core_argument(parser)
    args = parser.parse_args()
    core = args.core
    if args.worker:
        pin_to_core(core)
        spec = json.loads((args.worker / "spec.json").read_text())
        print(json.dumps(measure_pack(args.worker, spec)))
        return
    rows = []
    for docs in (int(d) for d in args.docs.split(",")):
        with tempfile.TemporaryDirectory(prefix="kiln-bench-pack-") as tmp:
            folder = Path(tmp)
            (folder / WORK_DIR).mkdir()
            log(f"writing {docs:,} synthetic documents of ~{args.tokens_per_doc} tokens")
            shards = write_units(folder, docs, args.tokens_per_doc, seed=docs)
            (folder / "spec.json").write_text(json.dumps([s.to_dict() for s in shards]))
            log(f"packing them on CPU {core}")
            done = subprocess.run([sys.executable, __file__, "--worker", str(folder), "--core", str(core)],
                                  capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"the packing process failed:\n{done.stderr[-3000:]}")
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{'documents':>12}{'copies':>12}{'tokens':>15}{'seconds':>9}{'peak MB':>9}{'B/copy':>8}{'B/token':>9}")
    for r in rows:
        print(f"{r['unique_documents']:>12,}{r['documents']:>12,}{r['tokens']:>15,}{r['seconds']:>9.1f}"
              f"{r['peak_mb']:>9.0f}{r['peak_mb'] * 2**20 / r['documents']:>8.0f}"
              f"{r['peak_mb'] * 2**20 / r['tokens']:>9.3f}")
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        per_copy = (b["peak_mb"] - a["peak_mb"]) * 2**20 / (b["documents"] - a["documents"])
        stream = TokenizeConfig().stream_max_documents
        print(f"growth between the smallest and the largest size: {per_copy:.0f} bytes per document copy; "
              f"1 billion documents (2 billion copies) in one stream would need "
              f"{per_copy * 2e9 / 2**30:,.0f} GiB on one node, a stream of tokenize.stream_max_documents = "
              f"{stream:,} documents about {per_copy * 2 * stream / 2**30:,.2f} GiB (at 2 copies per document)")


if __name__ == "__main__":
    main()
