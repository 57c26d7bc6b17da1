"""Tokenize per core: Kiln's encode path against HF `tokenizers` encode_batch, tokenizer training, packing,
and the token reader's random windows against raw np.memmap slicing.

Run from anywhere with Kiln's environment:  .venv/bin/python bench/tokenize_stage.py [--docs N] [--core N] [--out DIR]

Generates the demo corpus, reads it as Kiln's ingest does, writes it as a one-shard mix stage
and runs the tokenize stage's own steps on it in this process, pinned to one core: the training
sample and the tokenizer's training, the encoder check, one work unit (read the shard, encode,
write the tokens shard), packing, and the reader. Prints a table and writes the figures as JSON.
"""

from __future__ import annotations

import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
# This file shares its name with the standard library's `tokenize` module: search bench/ last.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != BENCH_DIR] + [str(BENCH_DIR)]

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from measure import driver_args, driver_parser, log, peak_rss_mb, pin_to_core, write_report  # noqa: E402

from common.config import KilnConfig, load_config  # noqa: E402
from common.manifest import Accounting, Manifest, require_manifest, write_manifest  # noqa: E402
from common.runner import WORK_DIR, UnitContext  # noqa: E402
from common.shards import write_shard  # noqa: E402
from common.tokenizer import load_tokenizer  # noqa: E402
from common.tokens import TokenDataset  # noqa: E402
from demo.generator import generate_demo_corpus  # noqa: E402
from stages.ingest.documents import read_documents  # noqa: E402
from stages.tokenize.bpe import train_tokenizer  # noqa: E402
from stages.tokenize.config import TokenizeConfig  # noqa: E402
from stages.tokenize.encoders import make_encoder  # noqa: E402
from stages.tokenize.sample import sample_texts  # noqa: E402
from stages.tokenize.stage import ENCODER_NAME, STAGE, TOKENIZER_NAME, finalize, plan, prepare, process  # noqa: E402

GOAL_TOKENS_PER_S = 1_500_000
WARMUP_DOCS = 64


def parse_args() -> argparse.Namespace:
    parser = driver_parser(__doc__, 20000)
    parser.add_argument("--vocab-size", type=int, default=32000, help="tokenizer vocabulary (default 32000)")
    default_mb = TokenizeConfig().sample_bytes / 1e6
    parser.add_argument("--sample-mb", type=float, default=default_mb,
                        help=f"tokenizer training sample in MB (default {default_mb:.1f}, tokenize.sample_bytes)")
    parser.add_argument("--seq-len", type=int, default=2048, help="reader window length (default 2048)")
    parser.add_argument("--batch", type=int, default=32, help="windows per reader batch (default 32)")
    parser.add_argument("--reads", type=int, default=4000, help="random windows read per reader method (default 4000)")
    return driver_args(parser, "tokenize.json", core_help="CPU the run is pinned to (default: the last one available)")


def write_mix(docs: pa.Table, mix_dir: Path) -> None:
    """The documents as a finished one-shard mix stage (every third document repeated twice)."""
    n = docs.num_rows
    table = docs.append_column("dup_cluster_size", pa.array(np.ones(n, np.int32)))
    table = table.append_column("repeat", pa.array(1 + (np.arange(n) % 3 == 0).astype(np.int32)))
    shard = write_shard(mix_dir / "part-00000.arrow", table, mix_dir)
    write_manifest(mix_dir, Manifest(stage="mix", code_version="bench", fingerprint="bench", config={}, input={},
                                     shards=[shard], excluded={}, accounting=Accounting(n, n)))


def rate(count: float, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("nan")


def time_encoders(texts: list[str], stage_dir: Path, batch: int) -> dict:
    """Encoding alone, in batches of the config's batch_docs: the encoder Kiln chose, and HF encode_batch."""
    tokenizer = load_tokenizer(stage_dir / TOKENIZER_NAME)
    chosen = json.loads((stage_dir / WORK_DIR / ENCODER_NAME).read_text())["encoder"]
    encoder = make_encoder(tokenizer, chosen)
    batches = [texts[i:i + batch] for i in range(0, len(texts), batch)]
    encoder.encode(texts[:WARMUP_DOCS])
    tokenizer.encode_batch(texts[:WARMUP_DOCS])
    start = time.perf_counter()
    tokens = sum(int(encoder.encode(b)[1].sum()) for b in batches)
    kiln_s = time.perf_counter() - start
    start = time.perf_counter()
    hf_tokens = sum(len(e) for b in batches for e in tokenizer.encode_batch(b, add_special_tokens=False))
    hf_s = time.perf_counter() - start
    assert hf_tokens == tokens, (hf_tokens, tokens)
    return {"encoder": chosen, "tokens": tokens, "encoder_s": kiln_s, "encoder_tokens_per_s": rate(tokens, kiln_s),
            "hf_encode_batch_s": hf_s, "hf_encode_batch_tokens_per_s": rate(hf_tokens, hf_s)}


def run_unit(cfg: KilnConfig, mix_dir: Path, stage_dir: Path, encoder: str) -> dict:
    """One work unit of the stage, timed: read the mix shard, encode, write the tokens shard."""
    (stage_dir / WORK_DIR / ENCODER_NAME).write_text(json.dumps({"encoder": encoder, "reason": "bench"}))
    unit = plan(cfg, mix_dir).units[0]
    ctx = UnitContext(STAGE, cfg, stage_dir, mix_dir, unit)
    start = time.perf_counter()
    process(unit, ctx)
    result = ctx.commit(time.perf_counter() - start)
    tokens = sum(result.stats["tokens"].values())
    return {"result": result, "seconds": result.seconds, "tokens": tokens, "tokens_per_s": rate(tokens, result.seconds)}


def time_reader(bin_path: Path, seq_len: int, batch: int, reads: int) -> dict:
    """Random windows per second: TokenDataset.window / .batch against raw np.memmap slices."""
    data = TokenDataset(bin_path, seq_len=seq_len)
    raw = np.memmap(bin_path, dtype=np.uint16, mode="r")
    picks = np.random.default_rng(0).integers(0, len(data), size=reads)
    width = seq_len + 1
    figures = {"windows": len(data), "seq_len": seq_len, "batch": batch, "reads": reads}

    def timed(fn) -> float:
        fn()
        start = time.perf_counter()
        fn()
        return rate(reads, time.perf_counter() - start)

    figures["window_per_s"] = timed(lambda: [data.window(int(i)) for i in picks])
    figures["raw_window_per_s"] = timed(lambda: [np.array(raw[i * seq_len:i * seq_len + width]) for i in picks])
    rows = picks.reshape(-1, batch)
    figures["batch_per_s"] = timed(lambda: [data.batch(row) for row in rows])

    def raw_batch(row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        windows = np.stack([raw[i * seq_len:i * seq_len + width] for i in row])
        return windows[:, :-1].astype(np.int32), windows[:, 1:].astype(np.int32)

    figures["raw_batch_per_s"] = timed(lambda: [raw_batch(row) for row in rows])
    return figures


def measure(args: argparse.Namespace, work: Path) -> dict:
    """Every figure of the run."""
    logging.basicConfig(level=logging.WARNING)
    quiet = logging.getLogger("kiln.bench")
    log(f"generating the demo corpus ({args.docs:,} records, seed {args.seed})")
    summary = generate_demo_corpus(work / "demo", args.docs, args.seed)
    cfg = load_config([], [f"tokenize.vocab_size={args.vocab_size}", f"tokenize.seq_len={args.seq_len}",
                           f"tokenize.sample_bytes={int(args.sample_mb * 1e6)}"])
    docs = read_documents([str(summary.corpus_dir)], cfg)
    texts = docs.column("text").to_pylist()
    total_bytes = sum(len(t.encode("utf-8")) for t in texts)
    mix_dir, stage_dir = work / "mix", work / "tokenize"
    write_mix(docs, mix_dir)
    (stage_dir / WORK_DIR).mkdir(parents=True)
    pin_to_core(args.core)
    log(f"pinned to CPU {args.core}; training a {args.vocab_size:,}-token tokenizer")

    start = time.perf_counter()
    sample = sample_texts(mix_dir, require_manifest(mix_dir).shards, cfg.tokenize.sample_bytes, cfg.tokenize.seed)
    sample_s = time.perf_counter() - start
    start = time.perf_counter()
    tokenizer = train_tokenizer(sample, cfg.tokenize.vocab_size)
    train_s = time.perf_counter() - start
    (stage_dir / TOKENIZER_NAME).write_text(tokenizer.to_str(), encoding="utf-8")
    start = time.perf_counter()
    prepare(cfg, mix_dir, stage_dir, quiet)
    check_s = time.perf_counter() - start
    training = {"sample_docs": len(sample), "sample_mb": sum(len(t.encode("utf-8")) for t in sample) / 1e6,
                "sample_s": sample_s, "train_s": train_s, "encoder_check_s": check_s,
                "vocab_size": tokenizer.get_vocab_size()}

    log("timing the encoders alone")
    encoders = time_encoders(texts, stage_dir, cfg.tokenize.batch_docs)
    log("timing one work unit with each encoder")
    chosen = encoders["encoder"]
    hf_unit = run_unit(cfg, mix_dir, stage_dir, "hf")
    unit = run_unit(cfg, mix_dir, stage_dir, chosen)
    log("timing the packing (finalize)")
    start = time.perf_counter()
    result = unit.pop("result")
    finalize(cfg, stage_dir, [result], result.stats, quiet)
    pack_s = time.perf_counter() - start
    hf_unit.pop("result")
    packed = json.loads((stage_dir / "meta.json").read_text())["splits"]["train"]["tokens"]
    log("timing the reader")
    reader = time_reader(stage_dir / "train.bin", args.seq_len, args.batch, args.reads)
    return {
        "input": {"docs": len(texts), "seed": args.seed, "total_bytes": total_bytes,
                  "mean_doc_bytes": total_bytes / len(texts)},
        "core": args.core,
        "training": training,
        "encoders": encoders,
        "unit": unit,
        "unit_hf": hf_unit,
        "pack": {"tokens": packed, "seconds": pack_s, "tokens_per_s": rate(packed, pack_s)},
        "reader": reader,
        "peak_rss_mb": peak_rss_mb(),
    }


def goals(report: dict) -> list[dict]:
    """The issue's goal, with the measured value and whether it is met."""
    unit = report["unit"]
    return [{"goal": f"whole encode path >= {GOAL_TOKENS_PER_S / 1e6:.1f} M tokens/s per core",
             "measured": f"{unit['tokens_per_s'] / 1e6:.2f} M tokens/s ({report['encoders']['encoder']})",
             "met": unit["tokens_per_s"] >= GOAL_TOKENS_PER_S}]


def print_report(report: dict) -> None:
    """The human-readable summary of ``report`` (the same figures as the JSON)."""
    bench, training, enc = report["input"], report["training"], report["encoders"]
    unit, hf_unit, pack, reader = report["unit"], report["unit_hf"], report["pack"], report["reader"]
    hf_rate = enc["hf_encode_batch_tokens_per_s"]
    print(f"\nTokenize per core: {bench['docs']:,} demo documents (seed {bench['seed']}), "
          f"{bench['total_bytes'] / 1e6:.1f} MB, {enc['tokens']:,} tokens; one process on CPU {report['core']}\n")
    print(f"  {'encoding':<58}{'seconds':>9}{'M tokens/s':>12}{'vs HF':>8}")
    rows = [
        (f"whole unit path, {enc['encoder']} (read, encode, EOS, write shard)", unit["seconds"], unit["tokens_per_s"]),
        ("whole unit path, hf (the fallback)", hf_unit["seconds"], hf_unit["tokens_per_s"]),
        (f"{enc['encoder']} encoder alone", enc["encoder_s"], enc["encoder_tokens_per_s"]),
        ("HF encode_batch alone (reference)", enc["hf_encode_batch_s"], hf_rate),
        ("packing: shuffle, repeats, train.bin/.idx", pack["seconds"], pack["tokens_per_s"]),
    ]
    for label, seconds, tokens_per_s in rows:
        print(f"  {label:<58}{seconds:>9.2f}{tokens_per_s / 1e6:>12.2f}{tokens_per_s / hf_rate:>7.1f}x")
    print(f"\n  tokenizer: {training['vocab_size']:,} ids trained on {training['sample_docs']:,} documents "
          f"({training['sample_mb']:.1f} MB) in {training['train_s']:.1f} s; sample selection "
          f"{training['sample_s']:.2f} s; encoder check {training['encoder_check_s']:.2f} s")
    print(f"\n  {'reader, random windows of ' + str(reader['seq_len'] + 1) + ' tokens':<58}{'samples/s':>12}"
          f"{'vs raw':>8}")
    for label, key, raw in (("TokenDataset.window(i)", "window_per_s", "raw_window_per_s"),
                            ("np.memmap slice + copy (raw)", "raw_window_per_s", "raw_window_per_s"),
                            (f"TokenDataset.batch({reader['batch']} windows) -> int32 inputs, labels",
                             "batch_per_s", "raw_batch_per_s"),
                            (f"np.memmap slices, stack, int32 ({reader['batch']} windows, raw)",
                             "raw_batch_per_s", "raw_batch_per_s")):
        print(f"  {label:<58}{reader[key]:>12,.0f}{reader[key] / reader[raw]:>7.2f}x")
    print(f"\n  peak RSS {report['peak_rss_mb']:,.0f} MiB (the whole run, corpus included)")
    print("\nGoals:")
    for goal in report["goals"]:
        print(f"  [{'met' if goal['met'] else 'NOT met'}] {goal['goal']}: {goal['measured']}")


def main() -> int:
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="kiln-bench-tokenize-") as tmp:
        report = measure(args, Path(tmp))
    report["goals"] = goals(report)
    out = write_report(args.out, "tokenize.json", report)
    print_report(report)
    print(f"\nfigures: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
