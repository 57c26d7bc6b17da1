"""Bench worker: time Kiln's clean on one core, end to end and part by part, on documents bench/clean.py wrote.

Usage (started by bench/clean.py): clean_kiln.py DOCS.arrow RESULT.json --core N --warmup N [--runs N]

With --runs N, clean_batch, clean_batch without the personal-data step, and the parts are timed N times, in turn,
and the fastest time of each is kept.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pyarrow as pa
from measure import timed, worker_args, write_result

from common.config import load_config
from stages.clean.config import CleanConfig
from stages.clean.lid import decide_languages
from stages.clean.lines import filter_lines
from stages.clean.pii import find_pii
from stages.clean.repair import repair
from stages.clean.rules import apply_rules, build_rules
from stages.clean.signals import compute_signals
from stages.clean.spam import spam_matcher
from stages.clean.stage import LANG_REASON, clean_batch
from stages.clean.timestamps import scrub_timestamps


def read_batches(path: Path, rows: int) -> list[pa.RecordBatch]:
    """The documents of an Arrow IPC file, in batches of ``rows`` as the clean stage slices them."""
    with pa.OSFile(str(path)) as source:
        table = pa.ipc.open_file(source).read_all().combine_chunks()
    batch = table.to_batches()[0]
    return [batch.slice(start, rows) for start in range(0, batch.num_rows, rows)]


def time_clean_batch(batches: list[pa.RecordBatch], cfg: CleanConfig) -> tuple[float, int]:
    """Seconds for clean_batch over every batch, and how many documents it kept."""
    start = time.perf_counter()
    kept = sum(clean_batch(batch, cfg)[0].num_rows for batch in batches)
    return time.perf_counter() - start, kept


def time_components(batches: list[pa.RecordBatch], cfg: CleanConfig) -> dict[str, float]:
    """Seconds spent in each part of clean_batch, each timed alone over the same texts."""
    seconds: dict[str, float] = {}
    spam = spam_matcher(tuple(cfg.spam_patterns))
    rules = build_rules(cfg.rules)
    for batch in batches:
        texts = batch.column("text").to_pylist()
        with timed(seconds, "repair"):
            texts = [repair(t) for t in texts] if cfg.repair else texts
        with timed(seconds, "timestamps"):
            texts = [scrub_timestamps(t)[0] for t in texts] if cfg.scrub_timestamps else texts
        with timed(seconds, "line filters"):
            texts = [v.text for v in filter_lines(texts, spam, cfg.line_filters)] if cfg.line_filters.enabled else texts
        with timed(seconds, "lid"):
            languages = decide_languages(texts, cfg.lid)
        with timed(seconds, "signals"):
            signals = compute_signals(texts, spam)
        with timed(seconds, "rules"):
            apply_rules(rules, signals, [d.lang for d in languages],
                        [None if d.accepted else LANG_REASON for d in languages])
        with timed(seconds, "personal data"):
            find_pii(texts, cfg.pii.kinds)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("docs", type=Path)
    parser.add_argument("result", type=Path)
    parser.add_argument("--runs", type=int, default=1, help="time everything this many times, keep the fastest")
    args = worker_args(parser, warmup=True)
    cfg = load_config().clean
    batches = read_batches(args.docs, cfg.batch_rows)
    start = time.perf_counter()
    clean_batch(batches[0].slice(0, args.warmup), cfg)
    warmup = time.perf_counter() - start
    without_pii = cfg.replace(pii=cfg.pii.replace(**dict.fromkeys(cfg.pii.kinds, False)))
    runs, runs_without_pii, parts = [], [], []
    for _ in range(args.runs):  # the whole and its parts in turn: a slow spell of the machine hits each
        runs.append(time_clean_batch(batches, cfg))
        runs_without_pii.append(time_clean_batch(batches, without_pii)[0])
        parts.append(time_components(batches, cfg))
    write_result(args.result, {
        "docs": sum(b.num_rows for b in batches), "batch_rows": cfg.batch_rows, "warmup_s": warmup,
        "seconds": min(seconds for seconds, _ in runs), "runs_s": [seconds for seconds, _ in runs], "kept": runs[0][1],
        "seconds_without_pii": min(runs_without_pii), "runs_without_pii_s": runs_without_pii,
        "components_s": {name: min(run[name] for run in parts) for name in parts[0]},
    })


if __name__ == "__main__":
    main()
