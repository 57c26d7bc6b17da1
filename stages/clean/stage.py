"""The clean stage: repair, scrub timestamps, identify the language, compute signals, apply rules."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pyarrow as pa

from common.config import CleanConfig
from common.histograms import signal_histograms
from common.runner import MapStage, UnitContext, WorkUnit, shard_plan
from common.schema import DOC_SCHEMA, category_array
from common.shards import ShardInfo, iter_batches
from common.signal_names import SIGNAL_NAMES
from stages.clean.batch_text import BatchText
from stages.clean.lid import decide_languages
from stages.clean.repair import repair
from stages.clean.rules import apply_rules, build_rules
from stages.clean.signals import compute_signals
from stages.clean.spam import spam_matcher
from stages.clean.timestamps import scrub_timestamps

LANG_REASON = "lang"
CLEAN_SCHEMA = pa.schema([*DOC_SCHEMA, *(pa.field(name, pa.float32()) for name in SIGNAL_NAMES)])
EXAMPLE_CHARS = 300


def clean_batch(batch: pa.RecordBatch, cfg: CleanConfig) -> tuple[pa.Table, dict[str, pa.Table], dict]:
    """Clean one batch of documents: (kept rows with q_* columns, dropped rows by rule with a
    ``signal`` column saying why, stats)."""
    texts = batch.column("text").to_pylist()
    repaired = [repair(t) for t in texts] if cfg.repair else list(texts)
    changed = sum(a != b for a, b in zip(texts, repaired, strict=True))
    if cfg.scrub_timestamps:
        scrubbed = [scrub_timestamps(t) for t in repaired]
        texts_out, spans = [t for t, _ in scrubbed], [n for _, n in scrubbed]
    else:
        texts_out, spans = repaired, [0] * len(texts)
    batch_text = BatchText(texts_out)  # language ID and the signals read the same code points
    languages = decide_languages(texts_out, cfg.lid, batch_text)
    langs = [d.lang for d in languages]
    signals = compute_signals(texts_out, spam_matcher(tuple(cfg.spam_patterns)), batch_text)
    rules = build_rules(cfg.rules)
    reasons, details = apply_rules(rules, signals, langs, [None if d.accepted else LANG_REASON for d in languages])
    for i, decision in enumerate(languages):
        if reasons[i] == LANG_REASON:
            details[i] = decision.detail

    metas = batch.column("meta").to_pylist()
    for i, (n_spans, before, after) in enumerate(zip(spans, texts, repaired, strict=True)):
        if n_spans or before != after or not metas[i]:  # the others pass through as ingest wrote them
            record = json.loads(metas[i]) if metas[i] else {}
            if n_spans:
                record["timestamps_removed"] = n_spans
            if before != after:
                record["repaired"] = True
            metas[i] = json.dumps(record, ensure_ascii=False, sort_keys=True)

    replaced = {
        "text": pa.array(texts_out, pa.large_string()),
        "meta": pa.array(metas, pa.string()),
        "lang": pa.array(langs, pa.string()),
        "category": category_array(batch.column("category").to_pylist()),
        "lang_score": pa.array([d.score for d in languages], pa.float32()),
    } | {name: pa.array(signals[name].astype(np.float32)) for name in SIGNAL_NAMES}
    full = pa.Table.from_arrays(
        [replaced[f.name] if f.name in replaced else batch.column(f.name).cast(f.type) for f in CLEAN_SCHEMA],
        schema=CLEAN_SCHEMA)
    source_ids = batch.column("source_id").to_pylist()

    kept = [i for i, r in enumerate(reasons) if r is None]
    dropped: dict[str, pa.Table] = {}
    by_reason: dict[str, list[int]] = {}
    for i, reason in enumerate(reasons):
        if reason is not None:
            by_reason.setdefault(reason, []).append(i)
    for reason, rows in by_reason.items():
        part = full.take(pa.array(rows, pa.int64()))
        dropped[reason] = part.append_column("signal", pa.array([details[i] for i in rows], pa.string()))

    lang_counts = Counter(langs)
    stats = {
        "docs_by_lang": dict(lang_counts),
        "kept_by_lang": dict(Counter(langs[i] for i in kept)),
        "dropped_by_rule_lang": {r: dict(Counter(langs[i] for i in rows)) for r, rows in by_reason.items()},
        "repaired": changed,
        "timestamp_spans_removed": int(sum(spans)),
        "examples": {
            r: [{"source_id": source_ids[i], "lang": langs[i], "signal": details[i],
                 "text": texts_out[i][:EXAMPLE_CHARS]} for i in rows[: cfg.examples_per_rule]]
            for r, rows in by_reason.items()
        },
        "histograms": signal_histograms(signals, langs),
    }
    return full.take(pa.array(kept, pa.int64())), dropped, stats


def process(unit: WorkUnit, ctx: UnitContext) -> None:
    """Clean one input shard, batch by batch (memory stays flat)."""
    cfg = ctx.cfg.clean
    for batch in iter_batches(ctx.input_dir, ShardInfo(**unit.spec["shard"])):
        for start in range(0, batch.num_rows, cfg.batch_rows):
            part = batch.slice(start, cfg.batch_rows)
            ctx.count_in(part.num_rows)
            kept, dropped, stats = clean_batch(part, cfg)
            ctx.keep(kept)
            for reason, rows in dropped.items():
                ctx.drop(reason, rows, signal=rows.column("signal"))
            ctx.add_stats(stats)


STAGE = MapStage(name="clean", output_schema=CLEAN_SCHEMA, plan=shard_plan, process=process)
