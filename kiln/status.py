"""`kiln status`: what every stage under a run root has done, as one table."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from common.categories import held_out_summary
from common.eval_sets import DECONTAMINATION_REPORT
from common.files import human_bytes
from common.manifest import MANIFEST_NAME, STATS_NAME, Accounting, read_manifest
from common.pipeline import STAGE_ORDER
from common.runner import FAILED_NAME, STATE_NAME, WORK_DIR


@dataclass
class StageStatus:
    """One row of the status table."""

    stage: str
    state: str  # missing | partial | failed | done
    accounting: Accounting = field(default_factory=Accounting)
    bytes_out: int = 0
    wall_seconds: float | None = None
    units_done: int = 0
    units_total: int | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)


def _partial(stage_dir: Path, name: str) -> StageStatus:
    failed = stage_dir / FAILED_NAME
    status = StageStatus(name, "partial")
    if failed.exists():
        status.state, status.error = "failed", json.loads(failed.read_text())["error"]
    state_file = stage_dir / WORK_DIR / STATE_NAME
    if state_file.exists():
        status.units_total = json.loads(state_file.read_text()).get("units")
    for marker in sorted((stage_dir / WORK_DIR).glob("unit-*.json")):
        data = json.loads(marker.read_text())
        status.accounting.add(Accounting.from_dict(data["accounting"]))
        status.bytes_out += data["shard"]["bytes"]
        status.units_done += 1
    return status


def stage_status(data_dir: Path) -> list[StageStatus]:
    """The state of each known stage, in pipeline order, plus any other stage folders found."""
    names = list(STAGE_ORDER)
    if data_dir.exists():
        names += sorted(p.name for p in data_dir.iterdir() if (p / MANIFEST_NAME).exists() and p.name not in names)
    rows = []
    for name in names:
        stage_dir = data_dir / name
        if not stage_dir.exists():
            rows.append(StageStatus(name, "missing"))
            continue
        manifest = read_manifest(stage_dir)
        if manifest is None:
            rows.append(_partial(stage_dir, name))
            continue
        status = StageStatus(name, "done", manifest.accounting, sum(s.bytes for s in manifest.shards))
        status.units_done = status.units_total = len(manifest.shards)
        stats_file = stage_dir / STATS_NAME
        stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
        status.wall_seconds = stats.get("wall_seconds")
        status.notes = (_lines_note(name, stats) + _pii_note(name, stats, manifest.config)
                        + _decontamination_note(stage_dir) + _classifier_note(stage_dir))
        rows.append(status)
    return rows


def _lines_note(stage: str, stats: dict) -> list[str]:
    """The lines a stage removed from documents (the clean stage's line filters), per reason."""
    removed = {reason: n for reason, n in ((stats.get("details") or {}).get("lines_removed") or {}).items()
               if n.get("lines")}
    if not removed:
        return []
    return [f"{stage} removed lines: " + ", ".join(
        f"{reason}={n['lines']:,} ({n['chars']:,} characters, {n['documents']:,} documents)"
        for reason, n in sorted(removed.items())) + f" (each in {stage}/_removed_lines/)"]


def _pii_note(stage: str, stats: dict, config: dict) -> list[str]:
    """The personal data the clean stage found in the documents it kept, per kind, and what it did with it."""
    pii = (stats.get("details") or {}).get("pii") or {}
    found = {kind: n for kind, n in (pii.get("kinds") or {}).items() if n.get("spans")}
    if not found:
        return []
    action = (config.get("pii") or {}).get("action", "replace")
    return [f"{stage} personal data ({action}): " + ", ".join(
        f"{kind}={n['spans']:,} in {n['documents']:,} documents" for kind, n in found.items())
        + f"; {pii['documents']:,} documents touched (where each was: {stage}/_pii/)"]


def _decontamination_note(stage_dir: Path) -> list[str]:
    """The dedup stage's decontamination, per evaluation set: items found and what was removed."""
    path = stage_dir / DECONTAMINATION_REPORT
    if not path.exists():
        return []
    summary = json.loads(path.read_text())
    sets = "; ".join(
        f"{name}: {row['items_found']:,} of {row['items']:,} items found, {row['documents']:,} documents removed"
        + (f", {row['excised_documents']:,} excised" if row["excised_documents"] else "")
        + f" ({row['chars']:,} characters)" + (f", {row['skipped_short']:,} items too short to match"
                                                if row["skipped_short"] else "")
        for name, row in summary["sets"].items())
    return [f"{stage_dir.name} decontamination ({summary['mode']}, {summary['ngram']}-grams): {sets} "
            f"(see {stage_dir.name}/{DECONTAMINATION_REPORT})"]


def _classifier_note(stage_dir: Path) -> list[str]:
    """The mix stage's category classifier, when it ran: its held-out accuracy and what it labelled."""
    summary = stage_dir / "mix_summary.json"
    report = json.loads(summary.read_text()).get("classifier") if summary.exists() else None
    if not report:
        return []
    labelled = sorted(report["labelled"].items(), key=lambda kv: (-kv[1], kv[0]))
    which = "classifier (Kiln's default model, held out: other packages)" if report.get("origin") == "default" \
        else "classifier"
    return [f"{stage_dir.name} {which}: {held_out_summary(report['held_out_accuracy'], report['held_out'])}; "
            "labelled " + ", ".join(f"{c}={n:,}" for c, n in labelled)
            + f" (unknown: below the threshold {report['threshold']:g})"]


def format_status(rows: list[StageStatus]) -> str:
    """An aligned plain-text table of the rows, then the drop reasons of each stage and the error that stopped
    a failed one."""
    header = ("stage", "state", "units", "docs in", "docs out", "dropped", "bytes out", "wall", "docs/s")
    lines = [header]
    reasons = []
    for row in rows:
        if row.state == "missing":
            lines.append((row.stage, "missing", *[""] * (len(header) - 2)))
            continue
        acc = row.accounting
        total = "?" if row.units_total is None else str(row.units_total)
        rate = f"{acc.docs_in / row.wall_seconds:,.0f}" if row.wall_seconds else ""
        lines.append((
            row.stage, row.state, f"{row.units_done}/{total}", f"{acc.docs_in:,}", f"{acc.docs_out:,}",
            f"{sum(acc.dropped.values()):,}", human_bytes(row.bytes_out),
            f"{row.wall_seconds:.1f} s" if row.wall_seconds is not None else "", rate,
        ))
        if acc.dropped:
            ranked = sorted(acc.dropped.items(), key=lambda kv: (-kv[1], kv[0]))
            reasons.append(f"{row.stage} dropped: " + ", ".join(f"{r}={n:,}" for r, n in ranked))
        if row.error:
            reasons.append(f"{row.stage} failed: {row.error}")
        reasons += row.notes
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    rendered = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    rendered.insert(1, "  ".join("-" * w for w in widths))
    wrapped = [textwrap.fill(line, width=100, subsequent_indent="    ") for line in reasons]
    return "\n".join(rendered + ([""] + wrapped if wrapped else []))


def token_summary(data_dir: Path) -> str:
    """One line on the packed tokens of a finished tokenize stage ("" when there are none)."""
    meta_path = data_dir / "tokenize" / "meta.json"
    if not (data_dir / "tokenize" / MANIFEST_NAME).exists() or not meta_path.exists():
        return ""
    meta = json.loads(meta_path.read_text())
    splits = ", ".join(f"{name} {split['tokens']:,} in {split['documents']:,} documents"
                       for name, split in meta["splits"].items())
    return f"\ntokens ({meta['dtype']}, vocabulary {meta['vocab_size']:,}, seq_len {meta['seq_len']}): {splits}"
