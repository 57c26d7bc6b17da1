"""`kiln report`: a static HTML page with PNG charts of what each finished stage of a run did."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatter, MaxNLocator, NullFormatter

from common.categories import held_out_summary
from common.errors import KilnError
from common.eval_sets import DECONTAMINATION_REPORT
from common.files import atomic_write_bytes, human_bytes
from common.histograms import COUNT_SIGNALS, bin_edges
from common.manifest import STATS_NAME, Manifest, read_manifest
from common.shards import ShardChecksumError, iter_batches
from kiln.ablation.report import ablation_section
from kiln.html import escape, save_chart, table
from kiln.report_train import TRAIN_DIR, train_section
from kiln.status import StageStatus, stage_status
from stages.dedup.lsh import candidate_probability
from stages.train.metrics import METRICS_NAME

REPORT_DIR = "report"
MAIN_LANGS = ("zh", "en")
OTHER = "other"
LANG_COLORS = {"zh": "#d62728", "en": "#1f77b4", OTHER: "#8c8c8c"}
EXAMPLES_PER_RULE = 3
EXAMPLE_CHARS = 240
LID_REASON = "lang"
DEDUP_REASONS = ("exact_dup", "near_dup")
DEDUP_COLORS = {"exact_dup": "#9467bd", "near_dup": "#ff7f0e"}
S_CURVE_JACCARDS = (0.8, 0.5)
MAX_LABELLED_SIZES = 20
KEPT_SIGNAL = re.compile(r"kept doc_id=(\d+) \(cluster of (\d+)\)")

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1200px;
       padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { border-bottom: 2px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
h3 { margin-top: 1.5em; }
table { border-collapse: collapse; margin: .8em 0; font-size: .92em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.meta { color: #555; font-size: .92em; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(540px, 1fr)); gap: .8em; }
img { max-width: 100%; border: 1px solid #eee; }
.ex { border-left: 3px solid #ccc; margin: .5em 0; padding: .2em .8em; background: #fafafa; }
.ex pre { white-space: pre-wrap; word-break: break-word; margin: .3em 0; font-size: .9em; }
.missing { color: #999; } .partial { color: #b36b00; } .done { color: #2a7d2a; }
"""


@dataclass
class StageData:
    """A finished stage as a report section sees it: its manifest, its `_stats.json`, where charts go."""

    name: str
    manifest: Manifest
    stats: dict
    out_dir: Path
    stage_dir: Path

    @property
    def details(self) -> dict:
        """The stage's own statistics (`_stats.json` "details")."""
        return self.stats.get("details") or {}

    def chart(self, fig: Figure, name: str, alt: str) -> str:
        """Save ``fig`` as ``<stage>-<name>.png`` next to the page; returns the <img> tag showing it."""
        return save_chart(fig, self.out_dir, f"{self.name}-{name}", alt)


Section = Callable[[StageData], str]


def _clip(text: str, chars: int = EXAMPLE_CHARS) -> str:
    return text if len(text) <= chars else text[:chars] + "…"


def _docs_per_second(docs: int, seconds: float | None) -> str:
    return f"{docs / seconds:,.0f}" if seconds else ""


def _statustable(rows: list[StageStatus]) -> str:
    header = ["stage", "state", "units", "docs in", "docs out", "dropped", "bytes out", "wall", "docs/s"]
    body = []
    for row in rows:
        state = f'<span class="{escape(row.state)}">{escape(row.state)}</span>'
        if row.state == "missing":
            body.append(f"<tr><td>{escape(row.stage)}</td><td>{state}</td>" + "<td></td>" * 7 + "</tr>")
            continue
        acc = row.accounting
        dropped = sum(acc.dropped.values())
        reasons = ", ".join(f"{r}={n:,}" for r, n in sorted(acc.dropped.items(), key=lambda kv: -kv[1]))
        total = "?" if row.units_total is None else str(row.units_total)
        cells = [
            f"{row.units_done}/{total}", f"{acc.docs_in:,}", f"{acc.docs_out:,}",
            f"{dropped:,} ({reasons})" if reasons else "0", human_bytes(row.bytes_out),
            f"{row.wall_seconds:.1f} s" if row.wall_seconds is not None else "",
            _docs_per_second(acc.docs_in, row.wall_seconds),
        ]
        link = f'<a href="#{escape(row.stage)}">{escape(row.stage)}</a>' if row.state == "done" else escape(row.stage)
        body.append(f"<tr><td>{link}</td><td>{state}</td>"
                    + "".join(f"<td>{escape(c)}</td>" if i == 3 else f'<td class="n">{escape(c)}</td>'
                              for i, c in enumerate(cells)) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in header)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _run_facts(stage: StageData) -> str:
    stats, acc = stage.stats, stage.manifest.accounting
    units = stats.get("units") or {}
    facts = [f"code {stage.manifest.code_version}"]
    if "wall_seconds" in stats:
        facts.append(f"wall {stats['wall_seconds']:.1f} s ({_docs_per_second(acc.docs_in, stats['wall_seconds'])} docs/s)")
    if units:
        facts.append(f"{units.get('total', '?')} units ({units.get('run', '?')} run, {units.get('resumed', 0)} resumed)")
    if "unit_seconds" in stats:
        facts.append(f"{stats['unit_seconds']:.1f} s in units")
    if "started_at" in stats:
        facts.append(f"started {stats['started_at']}")
    host = stats.get("host") or {}
    if host:
        facts.append(f"host {host.get('hostname', '?')} ({host.get('cpu_count', '?')} CPUs)")
    return f'<p class="meta">{escape(" · ".join(facts))}</p>'


def _accounting_section(stage: StageData) -> str:
    """The generic section: run facts and documents in / out / dropped by reason as a bar chart."""
    acc = stage.manifest.accounting
    reasons = sorted(acc.dropped.items(), key=lambda kv: (-kv[1], kv[0]))
    labels = ["in", "out", *(f"dropped: {r}" for r, _ in reasons)]
    values = [acc.docs_in, acc.docs_out, *(n for _, n in reasons)]
    colors = ["#7f7f7f", "#2ca02c", *["#d62728"] * len(reasons)]
    fig = Figure(figsize=(8, 1.3 + 0.32 * len(labels)), layout="constrained")
    ax = fig.add_subplot()
    y = np.arange(len(labels))
    bars = ax.barh(y, values, color=colors)
    ax.bar_label(bars, labels=[f"{v:,}" for v in values], padding=3, fontsize=9)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.margins(x=0.12)
    ax.set_xlabel("documents")
    ax.set_title(f"{stage.name}: documents in, out and dropped by reason")
    img = stage.chart(fig, "accounting", f"{stage.name} accounting")
    share = [[r, f"{n:,}", f"{100 * n / acc.docs_in:.2f} %" if acc.docs_in else ""] for r, n in reasons]
    rows = [["in", f"{acc.docs_in:,}", ""], ["out", f"{acc.docs_out:,}",
            f"{100 * acc.docs_out / acc.docs_in:.2f} %" if acc.docs_in else ""], *share]
    return _run_facts(stage) + img + table(["", "documents", "of in"], rows, numeric={1, 2})


def _ingest_section(stage: StageData) -> str:
    """Accounting plus the input files read, by format."""
    by_format: dict[str, list[int]] = {}
    for info in stage.manifest.input.get("files", []):
        entry = by_format.setdefault(str(info.get("format", "?")), [0, 0])
        entry[0] += int(info.get("files", 1))  # a folder of text files is one entry
        entry[1] += int(info.get("bytes", 0))
    rows = [[fmt, f"{n:,}", human_bytes(size)] for fmt, (n, size) in sorted(by_format.items())]
    files = "<h3>Input files</h3>" + table(["format", "files", "bytes"], rows, numeric={1, 2}) if rows else ""
    transcoded = stage.details.get("transcoded") or {}
    if transcoded:
        files += "<h3>Text files transcoded to UTF-8</h3>" + table(
            ["encoding", "documents"], [[enc, f"{n:,}"] for enc, n in sorted(transcoded.items())], numeric={1})
    return _accounting_section(stage) + files


def _fold(counts: dict[str, int]) -> dict[str, int]:
    folded = dict.fromkeys((*MAIN_LANGS, OTHER), 0)
    for lang, n in counts.items():
        folded[lang if lang in MAIN_LANGS else OTHER] += int(n)
    return folded


def _drops_chart(stage: StageData, by_rule: dict[str, dict[str, int]]) -> str:
    folded = {rule: _fold(langs) for rule, langs in by_rule.items()}
    rules = sorted(folded, key=lambda r: (-sum(folded[r].values()), r))
    fig = Figure(figsize=(8, 1.5 + 0.32 * len(rules)), layout="constrained")
    ax = fig.add_subplot()
    y = np.arange(len(rules))
    left = np.zeros(len(rules))
    for lang in (*MAIN_LANGS, OTHER):
        counts = np.array([folded[r][lang] for r in rules], dtype=float)
        ax.barh(y, counts, left=left, color=LANG_COLORS[lang], label=lang)
        left += counts
    for i, total in enumerate(left):
        ax.annotate(f"{int(total):,}", (total, i), xytext=(3, 0), textcoords="offset points", va="center", fontsize=9)
    ax.set_yticks(y, [f"{r} (language ID)" if r == LID_REASON else r for r in rules])
    ax.invert_yaxis()
    ax.margins(x=0.1)
    ax.set_xlabel("documents dropped")
    ax.set_title(f"{stage.name}: documents dropped per rule, by language")
    ax.legend(title="language", loc="lower right")
    return stage.chart(fig, "drops-by-rule-lang", "documents dropped per rule, by language")


def _thresholds(rules: dict[str, dict], signal: str) -> list[tuple[str, float, list[str]]]:
    """(min|max, value, languages) of the enabled rules on ``signal``, languages sharing a value merged."""
    grouped: dict[tuple[str, float], list[str]] = {}
    for rule in rules.values():
        if rule.get("signal") != signal or not rule.get("enabled", True):
            continue
        for kind in ("min", "max"):
            for lang, value in (rule.get(kind) or {}).items():
                grouped.setdefault((kind, float(value)), []).append(lang)
    return [(kind, value, sorted(langs)) for (kind, value), langs in sorted(grouped.items())]


def _binned(signal: str, per_lang: dict[str, dict[str, int]]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """All bin edges (left edges plus the last right edge) and the counts per folded language."""
    edges = bin_edges(signal)
    last = edges[-1] * edges[-1] / edges[-2]
    counts = {lang: np.zeros(len(edges)) for lang in (*MAIN_LANGS, OTHER)}
    for lang, bins in per_lang.items():
        target = counts[lang if lang in MAIN_LANGS else OTHER]
        for key, n in bins.items():
            target[np.abs(edges - float(key)).argmin()] += n
    return np.append(edges, last), counts


def _histogram_chart(stage: StageData, signal: str, per_lang: dict, rules: dict[str, dict]) -> str:
    edges, counts = _binned(signal, per_lang)
    thresholds = _thresholds(rules, signal)
    names = [name for name, rule in rules.items() if rule.get("signal") == signal and rule.get("enabled", True)]
    fig = Figure(figsize=(7.2, 3.4), layout="constrained")
    ax = fig.add_subplot()
    for lang, values in counts.items():
        if values.sum():
            ax.stairs(values, edges, color=LANG_COLORS[lang], linewidth=1.6, label=f"{lang} (n={int(values.sum()):,})")
    for kind, value, langs in thresholds:
        color = LANG_COLORS[langs[0]] if len(langs) == 1 and langs[0] in LANG_COLORS else "black"
        who = "all languages" if langs == ["*"] else ", ".join(langs)
        ax.axvline(value, color=color, linestyle="--" if kind == "max" else ":", linewidth=2,
                   label=f"{kind} {value:g} ({who})")
    total = sum(counts.values())
    occupied = np.nonzero(total)[0]
    upper = edges[occupied.max() + 1] if occupied.size else edges[1]
    if thresholds:
        highest = max(value for _, value, _ in thresholds)
        upper = max(upper, highest * (2 if signal in COUNT_SIGNALS else 1.15))
    linear_below = edges[1]
    ax.set_xscale("symlog", linthresh=linear_below, linscale=0.4)
    ax.set_xlabel(f"{signal} (log scale; 0 to {linear_below:g} linear)")
    ax.set_xlim(0, min(upper, edges[-1]))
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.7)
    ax.set_ylabel("documents (log scale)")
    ax.set_title(f"{signal}  [rule: {', '.join(names)}]", fontsize=11)
    fig.legend(loc="outside right upper", fontsize=8)
    return stage.chart(fig, f"hist-{signal}", f"histogram of {signal} per language with its thresholds")


def _bounds_text(bounds: dict[str, float]) -> str:
    return ", ".join(f"{lang} {float(v):g}" for lang, v in sorted(bounds.items()))


def _clean_section(stage: StageData) -> str:
    """Accounting, drops per rule and language, signal histograms with thresholds, example drops."""
    details = stage.details
    config = stage.manifest.config
    rules: dict[str, dict] = config.get("rules") or {}
    parts = [_accounting_section(stage)]

    docs_by_lang, kept_by_lang = details.get("docs_by_lang") or {}, details.get("kept_by_lang") or {}
    if docs_by_lang:
        langs = sorted(docs_by_lang, key=lambda lang: (-docs_by_lang[lang], lang))
        rows = []
        for lang in langs:
            docs, kept = docs_by_lang[lang], kept_by_lang.get(lang, 0)
            rows.append([lang, f"{docs:,}", f"{kept:,}", f"{docs - kept:,}", f"{100 * kept / docs:.1f} %" if docs else ""])
        parts.append("<h3>Documents per language</h3>"
                     + table(["language", "docs", "kept", "dropped", "kept share"], rows, numeric={1, 2, 3, 4}))
    parts.append(f'<p>Repaired documents: <b>{details.get("repaired", 0):,}</b> · '
                 f'timestamp spans removed: <b>{details.get("timestamp_spans_removed", 0):,}</b></p>')
    removed_lines: dict[str, dict[str, int]] = details.get("lines_removed") or {}
    if removed_lines:
        rows = [[reason, f'{n.get("documents", 0):,}', f'{n.get("lines", 0):,}', f'{n.get("chars", 0):,}']
                for reason, n in sorted(removed_lines.items())]
        parts.append("<h3>Lines removed from documents</h3>"
                     + table(["reason", "documents", "lines", "characters"], rows, numeric={1, 2, 3})
                     + "<p>Each removed line is in <code>clean/_removed_lines/</code> with its document's ids.</p>")
    pii = details.get("pii") or {}
    if pii.get("kinds"):
        action = (config.get("pii") or {}).get("action", "replace")
        rows = [[kind, f'{n.get("spans", 0):,}', f'{n.get("documents", 0):,}'] for kind, n in pii["kinds"].items()]
        parts.append(f"<h3>Personal data ({escape(action)})</h3>"
                     + table(["kind", "spans", "documents"], rows, numeric={1, 2})
                     + f'<p>{pii.get("documents", 0):,} documents touched. Where each span was (kind and position, '
                     "never the value) is in <code>clean/_pii/</code>.</p>")

    by_rule: dict[str, dict[str, int]] = details.get("dropped_by_rule_lang") or {}
    parts.append("<h3>Drops per rule</h3>")
    if by_rule:
        parts.append(_drops_chart(stage, by_rule))
    lid = (config.get("lid") or {}).get("thresholds") or {}
    rows = []
    for name in [LID_REASON, *rules, *sorted(set(by_rule) - set(rules) - {LID_REASON})]:
        rule = rules.get(name, {})
        folded = _fold(by_rule.get(name, {}))
        signal = "language ID score" if name == LID_REASON else rule.get("signal", "")
        low = _bounds_text(lid) if name == LID_REASON else _bounds_text(rule.get("min") or {})
        enabled = "yes" if name == LID_REASON or rule.get("enabled", True) else "no"
        rows.append([name, signal, low, _bounds_text(rule.get("max") or {}), enabled,
                     f"{sum(folded.values()):,}", *(f"{folded[lang]:,}" for lang in (*MAIN_LANGS, OTHER))])
    parts.append(table(["rule", "signal", "min", "max", "enabled", "dropped", *MAIN_LANGS, OTHER], rows,
                        numeric={5, 6, 7, 8}))

    histograms: dict = details.get("histograms") or {}
    signals = list(dict.fromkeys(r["signal"] for r in rules.values() if r.get("enabled", True) and "signal" in r))
    if signals:
        parts.append("<h3>Signals of the rules, per language</h3>"
                     '<p class="meta">Every document that reached the rules, from the fixed bins in _stats.json '
                     "(log-spaced for counts, 50 linear bins otherwise; a threshold finer than a bin falls inside "
                     "it). Dashed line: max, dotted line: min; languages other than zh and en are folded into "
                     "&ldquo;other&rdquo;.</p>")
        charts = [_histogram_chart(stage, s, histograms[s], rules) for s in signals if s in histograms]
        parts.append('<div class="grid">' + "".join(charts) + "</div>")
        absent = [s for s in signals if s not in histograms]
        if absent:
            parts.append(f'<p class="meta">No histogram recorded for: {escape(", ".join(absent))}</p>')

    examples: dict[str, list[dict]] = details.get("examples") or {}
    if examples:
        parts.append("<h3>Examples of dropped documents</h3>")
        for name in sorted(examples, key=lambda r: (r != LID_REASON, list(rules).index(r) if r in rules else len(rules), r)):
            parts.append(f"<h4>{escape(name)}</h4>")
            for ex in examples[name][:EXAMPLES_PER_RULE]:
                parts.append(f'<div class="ex"><div class="meta">{escape(ex.get("source_id", ""))} · '
                             f'{escape(ex.get("lang", ""))} · {escape(ex.get("signal", ""))}</div>'
                             f'<pre>{escape(_clip(str(ex.get("text", ""))))}</pre></div>')
    return "".join(parts)


def _dedup_settings(config: dict) -> str:
    """One paragraph on the MinHash / LSH parameters, the S-curve at a few similarities and the keep rule."""
    bands, rows = config.get("bands", "?"), config.get("rows", "?")
    text = (f"MinHash: {escape(config.get('num_perm', '?'))} permutations (seed {escape(config.get('seed', '?'))}) over "
            f"{escape(config.get('shingle_size', '?'))}-shingles. LSH: <b>{escape(bands)} bands × {escape(rows)} rows</b>; a "
            f"candidate pair is kept when its signature Jaccard reaches <b>{escape(config.get('threshold', '?'))}</b>.")
    if isinstance(bands, int) and isinstance(rows, int):
        curve = ", ".join(f"J={j:g}: <b>{candidate_probability(j, bands, rows):.3f}</b>" for j in S_CURVE_JACCARDS)
        text += f" Chance that a pair becomes a candidate, 1-(1-J<sup>{rows}</sup>)<sup>{bands}</sup>: {curve}."
    priority = " &gt; ".join(escape(c) for c in config.get("category_priority") or [])
    text += (f" Clusters: large-star/small-star rounds over <b>{escape(config.get('partitions', '?'))}</b> "
             f"partitions. Each cluster keeps one document: category priority {priority}, then the "
             f"highest {escape(config.get('quality_signal', '?'))}, then the lowest doc_id.")
    return f"<p>{text}</p>"


def _cluster_chart(stage: StageData, sizes: dict[int, int]) -> str:
    """Log-log clusters per cluster size, duplicates only (singletons are in the text); counts shown when few."""
    x = np.array(sorted(sizes))
    y = np.array([sizes[s] for s in x])
    fig = Figure(figsize=(7.2, 3.4), layout="constrained")
    ax = fig.add_subplot()
    ax.vlines(x, 0.7, y, color="#ff7f0e", linewidth=2)
    ax.plot(x, y, "o", color="#ff7f0e")
    if len(x) <= MAX_LABELLED_SIZES:
        for size, n in zip(x, y, strict=True):
            ax.annotate(f"{n:,}", (size, n), xytext=(4, 3), textcoords="offset points", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter("{x:,.0f}")
    ax.xaxis.set_minor_formatter(LogFormatter(minor_thresholds=(2, 1)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(x.min() / 1.3, x.max() * 1.5)
    ax.set_ylim(0.7, max(10, y.max() * 3))
    ax.set_xlabel("cluster size (documents, log scale)")
    ax.set_ylabel("clusters (log scale)")
    ax.set_title(f"{stage.name}: clusters with duplicates, by size")
    return stage.chart(fig, "cluster-sizes", "clusters per cluster size, log-log")


def _removed_chart(stage: StageData, key: str, label: str) -> str:
    """Grouped bars of the documents removed per ``key`` value, exact next to near duplicates."""
    counts = {r: stage.details.get(f"removed_{r}_by_{key}") or {} for r in DEDUP_REASONS}
    values = sorted(set().union(*counts.values()), key=lambda v: (-sum(c.get(v, 0) for c in counts.values()), v))
    fig = Figure(figsize=(max(5.0, 1.2 + 0.9 * len(values)), 3.4), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(values))
    width = 0.8 / len(DEDUP_REASONS)
    for i, reason in enumerate(DEDUP_REASONS):
        heights = [counts[reason].get(v, 0) for v in values]
        bars = ax.bar(x + (i - (len(DEDUP_REASONS) - 1) / 2) * width, heights, width, color=DEDUP_COLORS[reason], label=reason)
        ax.bar_label(bars, labels=[f"{h:,}" if h else "" for h in heights], padding=2, fontsize=8)
    ax.set_xticks(x, values, rotation=20 if len(values) > 4 else 0)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.margins(y=0.3)
    ax.set_ylabel("documents removed")
    ax.set_title(f"{stage.name}: documents removed per {label}")
    ax.legend(loc="upper center", ncols=len(DEDUP_REASONS), fontsize=9)
    return stage.chart(fig, f"removed-by-{key}", f"documents removed per {label}, exact and near duplicates")


def _dedup_examples(stage: StageData, reason: str) -> list[list[object]]:
    """Up to EXAMPLES_PER_RULE rows of the first non-empty excluded shard of ``reason``, as table rows."""
    info = next((s for s in stage.manifest.excluded.get(reason, []) if s.rows), None)
    if info is None:
        return []
    with closing(iter_batches(stage.stage_dir, info)) as batches:
        batch = next(batches)
    rows = []
    for row in batch.slice(0, EXAMPLES_PER_RULE).to_pylist():
        match = KEPT_SIGNAL.fullmatch(row["signal"] or "")
        kept, size = match.groups() if match else (row["signal"], "")
        text = _clip(" ".join(row["text"].split()), EXAMPLE_CHARS // 2)
        rows.append([reason, row["doc_id"], row["source_id"], kept, size, text])
    return rows


def _dedup_section(stage: StageData) -> str:
    """Accounting, LSH settings, cluster sizes, removals per category and language, example removals."""
    details = stage.details
    parts = [_accounting_section(stage), "<h3>Settings</h3>", _dedup_settings(stage.manifest.config)]

    sizes = {int(s): int(n) for s, n in (details.get("cluster_sizes") or {}).items()}
    if sizes:
        singletons = sizes.pop(1, 0)
        parts.append(f"<h3>Clusters</h3><p>{singletons + sum(sizes.values()):,} clusters, one kept document each: "
                     f"<b>{singletons:,}</b> singletons (no duplicate; not charted) and <b>{sum(sizes.values()):,}</b> "
                     f"with duplicates, of up to {max(sizes, default=1):,} documents.</p>")
        if sizes:
            parts.append(_cluster_chart(stage, sizes))

    keys = [(key, label) for key, label in (("category", "category"), ("lang", "language"))
            if any(details.get(f"removed_{r}_by_{key}") for r in DEDUP_REASONS)]
    if keys:
        parts.append("<h3>Removed documents</h3>"
                     '<div class="grid">' + "".join(_removed_chart(stage, k, label) for k, label in keys) + "</div>")

    examples: list[list[object]] = []
    missing = []
    for reason in DEDUP_REASONS:
        try:
            examples += _dedup_examples(stage, reason)
        except ShardChecksumError as err:
            missing.append(str(err))
    if examples or missing:
        parts.append("<h3>Examples of removed documents</h3>")
    if examples:
        parts.append(table(["reason", "doc_id", "source_id", "kept doc_id", "cluster size", "text"], examples,
                            numeric={1, 3, 4}))
    parts.extend(f'<p class="meta">No examples: {escape(m)}</p>' for m in missing)
    parts.append(_decontamination_section(stage))
    return "".join(parts)


def _decontamination_section(stage: StageData) -> str:
    """Per evaluation set: its items, those found in the corpus, what was removed, and the most-matched items."""
    path = stage.stage_dir / DECONTAMINATION_REPORT
    if not path.exists():
        return ""
    summary = json.loads(path.read_text())
    parts = [f"<h3>Decontamination</h3><p>Documents sharing a {summary['ngram']}-token window or a whole short "
             f"question with an evaluation item are {'removed' if summary['mode'] == 'drop' else 'cut'}; "
             f"{summary['common_ngrams_ignored']:,} windows shared by more than {summary['max_items_per_ngram']} "
             "items were ignored as exam phrasing.</p>",
             table(["evaluation set", "items", "too short", "found in the corpus", "documents removed",
                    "documents excised", "characters removed"],
                   [[name, f"{r['items']:,}", f"{r['skipped_short']:,}", f"{r['items_found']:,}",
                     f"{r['documents']:,}", f"{r['excised_documents']:,}", f"{r['chars']:,}"]
                    for name, r in summary["sets"].items()], numeric={1, 2, 3, 4, 5, 6})]
    top = [[name, t["item"], t["documents"], _clip(t["question"], EXAMPLE_CHARS // 2)]
           for name, r in summary["sets"].items() for t in r["top_items"]]
    if top:
        parts += ["<p>The most-matched items:</p>", table(["evaluation set", "item", "documents", "question"], top,
                                                           numeric={2})]
    files = [[f["set_name"], f["path"], f"{f['items']:,}", f["sha256"][:16]] for f in summary["files"]]
    parts.append(table(["evaluation set", "file", "items", "sha256 (first 16)"], files, numeric={2}))
    return "".join(parts)


def _mix_chart(stage: StageData, categories: dict[str, dict]) -> str:
    """Planned next to realized share of the training tokens, per category."""
    names = sorted(categories, key=lambda c: (-categories[c]["planned_share"], c))
    fig = Figure(figsize=(7.2, 3.4), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(names))
    for offset, key, color in ((-0.2, "planned_share", "#9aa5b1"), (0.2, "realized_share", "#2b6cb0")):
        heights = [100 * categories[c][key] for c in names]
        bars = ax.bar(x + offset, heights, 0.4, color=color, label=key.replace("_share", ""))
        ax.bar_label(bars, labels=[f"{h:.1f}" for h in heights], padding=2, fontsize=8)
    ax.set_xticks(x, names)
    ax.margins(y=0.2)
    ax.set_ylabel("share of training tokens (%)")
    ax.set_title(f"{stage.name}: planned vs realized category mix")
    ax.legend(fontsize=9)
    return stage.chart(fig, "categories", "planned and realized share of training tokens per category")


def _mix_section(stage: StageData) -> str:
    """Accounting, the planned vs realized category mix, the category classifier and the sources' epochs."""
    parts = [_accounting_section(stage)]
    summary_path = stage.stage_dir / "mix_summary.json"
    if not summary_path.exists():
        return "".join(parts)
    summary = json.loads(summary_path.read_text())
    categories = summary.get("categories") or {}
    parts.append("<h3>Category mix</h3>")
    parts.extend(f'<p class="meta">{escape(w)}</p>' for w in summary.get("warnings") or [])
    if categories:
        parts.append(_mix_chart(stage, categories))
    if classifier := summary.get("classifier"):
        labelled = ", ".join(f"{c} {n:,}" for c, n in sorted(classifier["labelled"].items(), key=lambda kv: -kv[1]))
        held_out = held_out_summary(classifier["held_out_accuracy"], classifier["held_out"])
        parts.append(f"<p>Category classifier: {held_out}, threshold {classifier['threshold']:g}; documents of "
                     f"unknown category labelled: {escape(labelled) or 'none'}.</p>")
    rows = [[s, f"{r['planned_tokens']:,.0f}", f"{r['realized_tokens']:,.0f}", f"{r['epochs']:.2f}"]
            for s, r in sorted((summary.get("sources") or {}).items())]
    if rows:
        parts.append(table(["category/source", "planned tokens", "realized tokens", "epochs"], rows,
                            numeric={1, 2, 3}))
    return "".join(parts)


def _tokenize_section(stage: StageData) -> str:
    """Accounting, then tokens per split and per category, language and source (repeats counted)."""
    parts = [_accounting_section(stage)]
    meta_path = stage.stage_dir / "meta.json"
    if not meta_path.exists():
        return "".join(parts)
    meta = json.loads(meta_path.read_text())
    splits = meta.get("splits") or {}
    parts.append(f"<h3>Tokens</h3><p>{escape(meta.get('dtype'))}, vocabulary {meta.get('vocab_size', 0):,}, "
                 f"EOS id {meta.get('eos_id')}, seq_len {meta.get('seq_len')}, encoder "
                 f"{escape((meta.get('tokenizer') or {}).get('encoder'))}.</p>")
    parts.append(table(["split", "tokens", "documents (with repeats)", "unique documents"],
                        [[n, f"{s['tokens']:,}", f"{s['documents']:,}", f"{s['unique_documents']:,}"]
                         for n, s in splits.items()], numeric={1, 2, 3}))
    train = (splits.get("train") or {}).get("tokens_by_category") or {}
    if train:
        names = sorted(train, key=lambda c: (-train[c], c))
        total = sum(train.values()) or 1
        fig = Figure(figsize=(7.2, 3.2), layout="constrained")
        ax = fig.add_subplot()
        bars = ax.bar(names, [100 * train[c] / total for c in names], color="#2b6cb0")
        ax.bar_label(bars, labels=[f"{100 * train[c] / total:.1f}" for c in names], padding=2, fontsize=8)
        ax.margins(y=0.2)
        ax.set_ylabel("share of training tokens (%)")
        ax.set_title(f"{stage.name}: BPE tokens per category (train, repeats counted)")
        parts.append(stage.chart(fig, "tokens-by-category", "share of training tokens per category"))
    return "".join(parts)


SECTIONS: dict[str, Section] = {
    "ingest": _ingest_section,
    "clean": _clean_section,
    "dedup": _dedup_section,
    "mix": _mix_section,
    "tokenize": _tokenize_section,
}
"""Stage name -> function rendering its section, in page order; other finished stages get the accounting section."""


def write_report(data_dir: Path, out_dir: Path | None = None) -> Path:
    """Write ``index.html`` and its PNG charts to ``out_dir`` (default DATA_DIR/report); returns the page's path.

    The page has a section per finished data stage, then one for the training run in DATA_DIR/train and one
    for the ablation in DATA_DIR/ablation.
    """
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise KilnError(f"{data_dir} does not exist (run `make data DATA_DIR={data_dir}` first)")
    rows = stage_status(data_dir)
    finished = [row.stage for row in rows if row.state == "done"]
    train_dir = data_dir / TRAIN_DIR
    if not finished and not (train_dir / METRICS_NAME).exists():
        raise KilnError(f"no finished stage under {data_dir}: nothing to report (see `kiln status {data_dir}`)")
    out_dir = Path(out_dir) if out_dir is not None else data_dir / REPORT_DIR
    out_dir.mkdir(parents=True, exist_ok=True)

    order = [name for name in SECTIONS if name in finished] + [name for name in finished if name not in SECTIONS]
    sections = []
    for name in order:
        stage_dir = data_dir / name
        stats_file = stage_dir / STATS_NAME
        stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
        stage = StageData(name, read_manifest(stage_dir), stats, out_dir, stage_dir)
        body = SECTIONS.get(name, _accounting_section)(stage)
        sections.append(f'<section id="{escape(name)}"><h2>{escape(name)}</h2>{body}</section>')
    sections.append(train_section(train_dir, out_dir))
    sections.append(ablation_section(data_dir, out_dir))

    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Kiln report: {escape(data_dir)}</title><style>{CSS}</style></head><body>"
        f"<h1>Kiln report</h1><p class=\"meta\">run root {escape(data_dir.resolve())}</p>"
        f"<h2>Status</h2>{_statustable(rows)}{''.join(sections)}</body></html>\n"
    )
    path = out_dir / "index.html"
    atomic_write_bytes(path, page.encode("utf-8"))
    return path
