"""The clean stage: repair, scrub timestamps, remove ad lines, identify the language, compute signals, apply rules;
then remove repeated lines (navigation bars, footers) from the documents kept and judge those again; last, replace
the personal data in the documents kept."""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa

from common.config import KilnConfig
from common.files import atomic_write_json, file_sha256
from common.histograms import signal_histograms
from common.runner import MapStage, UnitContext, UnitResult, WorkUnit, shard_plan
from common.schema import DOC_SCHEMA, category_array
from common.shards import ShardInfo, iter_batches
from common.signal_names import SIGNAL_NAMES
from stages.clean.batch_text import BatchText
from stages.clean.config import CleanConfig
from stages.clean.lid import decide_languages
from stages.clean.lines import filter_lines, without_lines
from stages.clean.pii import PiiSpan, count_kinds, find_pii, replace_pii
from stages.clean.repair import repair
from stages.clean.repeated_lines import group_of, repeated_lines
from stages.clean.rules import apply_rules, build_rules
from stages.clean.signals import compute_signals
from stages.clean.spam import SpamScan, spam_matcher
from stages.clean.timestamps import scrub_timestamps

LANG_REASON = "lang"
SPAM_REASON = "spam"
TOO_SHORT = "too_short"
TOO_SHORT_AFTER_LINES = "too_short_after_line_filters"
AD_LINE = "ad"
REPEATED_LINE = "repeated"
PII_REASON = "pii"
REMOVED_LINES = "_removed_lines"
"""Where the lines removed from documents are written (doc_id, source_id, reason, line), one shard a unit."""
PII_SPANS = "_pii"
"""Where each piece of personal data was (doc_id, source_id, kind, start, end in the text written), never its value."""
PII_SUMMARY = "pii.json"
"""Per kind, the spans found and the documents holding them, with the action taken: named in the manifest."""
PII_SCHEMA = pa.schema([("doc_id", pa.int64()), ("source_id", pa.string()), ("kind", pa.string()),
                        ("start", pa.int64()), ("end", pa.int64())])
CLEAN_SCHEMA = pa.schema([*DOC_SCHEMA, *(pa.field(name, pa.float32()) for name in SIGNAL_NAMES)])
EXAMPLE_CHARS = 300


def _remove_repeated_lines(texts: list[str], batch_text: BatchText, groups: list[str], reasons: list[str | None],
                           removed_lines: dict[int, list[tuple[str, str]]], cfg: CleanConfig) -> list[int]:
    """Remove the lines repeated across their group's documents (stages/clean/repeated_lines.py) from the documents
    the rules keep (``batch_text``: the BatchText of ``texts``); the indices of those changed. Every document of the
    batch counts toward finding the lines."""
    changed = []
    for i, repeated in enumerate(repeated_lines(batch_text, groups, cfg.line_filters)):
        if repeated and reasons[i] is None:
            lines = texts[i].split("\n")
            removed_lines.setdefault(i, []).extend((REPEATED_LINE, lines[n]) for n in sorted(repeated))
            texts[i] = without_lines(lines, repeated)
            changed.append(i)
    return changed


def _handle_pii(texts: list[str], reasons: list[str | None], details: list[str | None],
                cfg: CleanConfig) -> dict[int, list[PiiSpan]]:
    """Find the personal data in the documents the rules keep and do what ``clean.pii.action`` says: replace it in
    ``texts``, or also drop the document (``reasons``), or leave it. Per document touched, its spans (positions in
    the text as written)."""
    kinds = cfg.pii.kinds
    kept = [i for i, reason in enumerate(reasons) if reason is None]
    touched: dict[int, list[PiiSpan]] = {}
    if not kinds or not kept:
        return touched
    for i, spans in zip(kept, find_pii([texts[i] for i in kept], kinds), strict=True):
        if not spans:
            continue
        if cfg.pii.action == "keep":
            touched[i] = spans
            continue
        result = replace_pii(texts[i], spans)
        texts[i], touched[i] = result.text, result.spans
        if cfg.pii.action == "drop_document":
            reasons[i] = PII_REASON
            details[i] = "pii: " + ", ".join(f"{n} {kind}" for kind, n in sorted(count_kinds(result.spans).items()))
    return touched


def clean_batch(batch: pa.RecordBatch, cfg: CleanConfig) -> tuple[pa.Table, dict[str, pa.Table], dict,
                                                                  dict[str, pa.Table]]:
    """Clean one batch of documents: (kept rows with q_* columns, dropped rows by rule with a ``signal`` column
    saying why, stats, the audit records: the lines removed from documents and where personal data was)."""
    texts = batch.column("text").to_pylist()
    repaired = [repair(t) for t in texts] if cfg.repair else list(texts)
    changed = sum(a != b for a, b in zip(texts, repaired, strict=True))
    if cfg.scrub_timestamps:
        scrubbed = [scrub_timestamps(t) for t in repaired]
        texts_out, spans = [t for t, _ in scrubbed], [n for _, n in scrubbed]
    else:
        texts_out, spans = list(repaired), [0] * len(texts)  # changed below: ``repaired`` stays as repair left it
    spam = spam_matcher(tuple(cfg.spam_patterns))
    scan = SpamScan.of(texts_out, spam) if spam is not None else None  # lowercased and scanned once
    decided: list[str | None] = [None] * len(texts_out)
    metas = batch.column("meta").to_pylist()
    removed_lines: dict[int, list[tuple[str, str]]] = {}  # document -> (reason, line) of each line removed
    if cfg.line_filters.enabled:
        for i, verdict in enumerate(filter_lines(texts_out, spam, cfg.line_filters, scan)):
            if verdict.removed and verdict.ad_share > cfg.line_filters.max_ad_share:
                decided[i] = SPAM_REASON
            elif verdict.removed:
                texts_out[i], removed_lines[i] = verdict.text, [(AD_LINE, line) for line in verdict.removed]
    batch_text = BatchText(texts_out)  # language ID and the signals read the same code points
    languages = decide_languages(texts_out, cfg.lid, batch_text)
    langs = [d.lang for d in languages]
    signals = compute_signals(texts_out, spam, batch_text, scan.updated(texts_out, spam) if scan else None)
    rules = build_rules(cfg.rules)
    reasons, details = apply_rules(rules, signals, langs,
                                   [decided[i] or (None if d.accepted else LANG_REASON) for i, d in enumerate(languages)])
    if cfg.line_filters.enabled:
        groups = [group_of(meta, source) for meta, source in zip(metas, batch.column("source").to_pylist(), strict=True)]
        framed = _remove_repeated_lines(texts_out, batch_text, groups, reasons, removed_lines, cfg)
        if framed:  # the signals of what is left, and its length judged again (the page as it came passed the rest)
            fresh = compute_signals([texts_out[i] for i in framed], spam)
            for name, values in fresh.items():
                signals[name][framed] = values
            again, why = apply_rules([rule for rule in rules if rule.name == TOO_SHORT],
                                     {name: values[framed] for name, values in signals.items()},
                                     [langs[i] for i in framed], [None] * len(framed))
            for k, i in enumerate(framed):
                reasons[i], details[i] = again[k], why[k]
    for i, decision in enumerate(languages):
        if reasons[i] == LANG_REASON:
            details[i] = decision.detail
        elif decided[i] == SPAM_REASON:
            details[i] = f"line_filters: ad lines are more than {cfg.line_filters.max_ad_share:.0%} of the text"
        elif reasons[i] == TOO_SHORT and i in removed_lines:
            reasons[i] = TOO_SHORT_AFTER_LINES
            removed = Counter(reason for reason, _ in removed_lines[i])
            what = ", ".join(f"{n} {reason} lines" for reason, n in sorted(removed.items()))
            details[i] = f"{details[i]}, after {what} removed"
    pii = _handle_pii(texts_out, reasons, details, cfg)

    for i, (n_spans, before, after) in enumerate(zip(spans, texts, repaired, strict=True)):
        if n_spans or before != after or i in removed_lines or i in pii or not metas[i]:  # the others as ingest wrote them
            record = json.loads(metas[i]) if metas[i] else {}
            if n_spans:
                record["timestamps_removed"] = n_spans
            if i in pii:
                record["pii"] = dict(sorted(count_kinds(pii[i]).items()))
            for reason, n in Counter(reason for reason, _ in removed_lines.get(i, [])).items():
                record[f"{reason}_lines_removed"] = n
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

    doc_ids = batch.column("doc_id").to_pylist()
    audit_rows = [(i, reason, line) for i, lines in removed_lines.items() for reason, line in lines]
    audit = pa.table({
        "doc_id": pa.array([doc_ids[i] for i, _, _ in audit_rows], pa.int64()),
        "source_id": pa.array([source_ids[i] for i, _, _ in audit_rows], pa.string()),
        "reason": pa.array([reason for _, reason, _ in audit_rows], pa.string()),
        "line": pa.array([line for _, _, line in audit_rows], pa.large_string()),
    })
    pii_rows = [(i, span) for i, found in sorted(pii.items()) for span in found]
    pii_audit = pa.table({
        "doc_id": [doc_ids[i] for i, _ in pii_rows], "source_id": [source_ids[i] for i, _ in pii_rows],
        "kind": [span.kind for _, span in pii_rows], "start": [span.start for _, span in pii_rows],
        "end": [span.end for _, span in pii_rows]}, schema=PII_SCHEMA)
    spans_of = Counter(span.kind for _, span in pii_rows)
    documents_with = Counter(kind for found in pii.values() for kind in count_kinds(found))
    pii_kinds = {kind: {"spans": spans_of[kind], "documents": documents_with[kind]} for kind in cfg.pii.kinds}
    lines_removed: dict[str, dict[str, int]] = {}
    for reason in (AD_LINE, REPEATED_LINE):
        rows = [(i, line) for i, r, line in audit_rows if r == reason]
        lines_removed[reason] = {"documents": len({i for i, _ in rows}), "lines": len(rows),
                                 "chars": sum(len(line) for _, line in rows)}
    lang_counts = Counter(langs)
    stats = {
        "docs_by_lang": dict(lang_counts),
        "kept_by_lang": dict(Counter(langs[i] for i in kept)),
        "dropped_by_rule_lang": {r: dict(Counter(langs[i] for i in rows)) for r, rows in by_reason.items()},
        "repaired": changed,
        "timestamp_spans_removed": int(sum(spans)),
        "lines_removed": lines_removed,
        "pii": {"documents": len(pii), "kinds": pii_kinds},
        "examples": {
            r: [{"source_id": source_ids[i], "lang": langs[i], "signal": details[i],
                 "text": texts_out[i][:EXAMPLE_CHARS]} for i in rows[: cfg.examples_per_rule]]
            for r, rows in by_reason.items()
        },
        "histograms": signal_histograms(signals, langs),
    }
    return full.take(pa.array(kept, pa.int64())), dropped, stats, {REMOVED_LINES: audit, PII_SPANS: pii_audit}


def process(unit: WorkUnit, ctx: UnitContext) -> None:
    """Clean one input shard, batch by batch (memory stays flat)."""
    cfg = ctx.cfg.clean
    for batch in iter_batches(ctx.input_dir, ShardInfo(**unit.spec["shard"])):
        for start in range(0, batch.num_rows, cfg.batch_rows):
            part = batch.slice(start, cfg.batch_rows)
            ctx.count_in(part.num_rows)
            kept, dropped, stats, audit = clean_batch(part, cfg)
            ctx.keep(kept)
            for output, rows in audit.items():
                ctx.record(output, rows)
            for reason, rows in dropped.items():
                ctx.drop(reason, rows, signal=rows.column("signal"))
            ctx.add_stats(stats)


def finalize(cfg: KilnConfig, stage_dir: Path, results: list[UnitResult], details: dict,
             log: logging.Logger) -> dict[str, list[ShardInfo]]:
    """Write the personal-data summary (action, spans and documents per kind, documents touched) and name it in the
    manifest."""
    pii = details.get("pii") or {"documents": 0, "kinds": {}}
    summary = {"action": cfg.clean.pii.action, "switched_on": cfg.clean.pii.kinds, **pii}
    log.info("clean: personal data (%s) in %d documents: %s", summary["action"], summary["documents"],
             ", ".join(f"{kind}={n['spans']}" for kind, n in summary["kinds"].items())
             if summary["switched_on"] else "no kind switched on")
    path = stage_dir / PII_SUMMARY
    atomic_write_json(path, summary, indent=1)
    return {"pii": [ShardInfo(path=PII_SUMMARY, rows=summary["documents"], bytes=path.stat().st_size,
                              sha256=file_sha256(path))]}


STAGE = MapStage(name="clean", output_schema=CLEAN_SCHEMA, plan=shard_plan, process=process, finalize=finalize)
