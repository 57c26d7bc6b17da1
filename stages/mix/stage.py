"""The mix stage: a validation split, then category-balanced repeats of the training documents.

Global step (``prepare``): with ``mix.classifier.enabled``, train the category classifier
(``_work/category_classifier.*``) and label each shard's unknown documents (``_work/labels/``,
stages/mix/labels.py); then count the tokens of every category/source in the training split and
plan how many epochs each source gets (``_work/plan.json``). Map units: per input shard,
send validation documents to ``validation/``, give each training document its ``repeat`` count
(⌊e⌋ plus one more by a seeded draw), and drop the ones drawn zero times. ``finalize`` writes
``mix_summary.json``: planned and realized tokens per category, source and language.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from common.categories import default_model_dir, held_out_summary
from common.config import KilnConfig
from common.errors import KilnError
from common.files import atomic_write_bytes, atomic_write_json, file_sha256
from common.hashing import unit_interval
from common.manifest import require_manifest
from common.runner import (
    WORK_DIR,
    MapStage,
    UnitContext,
    UnitResult,
    WorkUnit,
    input_schema_with,
    run_tasks,
    shard_plan,
)
from common.schema import category_array
from common.shards import ShardInfo, iter_batches
from stages.mix.classifier import (
    MODEL_NAME,
    REPORT_NAME,
    ExampleSampler,
    load_report,
    read_labelled_sample,
    train_classifier,
    use_default_model,
)
from stages.mix.config import MixConfig
from stages.mix.labels import label_task, labelled_batches
from stages.mix.plan import MixPlan, make_plan, repeats

PLAN = "plan.json"
SUMMARY = "mix_summary.json"
VALIDATION = "validation"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class _Columns:
    doc_ids: np.ndarray
    categories: list[str]
    category_scores: np.ndarray  # the classifier's probability; NaN where it predicted nothing
    sources: list[str]
    tokens: np.ndarray


def _batches(input_dir: Path, info: ShardInfo, index: int, stage_dir: Path, cfg: MixConfig
             ) -> Iterator[tuple[pa.RecordBatch, _Columns]]:
    """Input shard ``index``'s batches with the columns mix plans with: categories as the classifier labelled
    them (when enabled), then unknown ones put in mix.unknown_category."""
    if cfg.classifier.enabled:
        batches = labelled_batches(input_dir, info, stage_dir / WORK_DIR, index)
    else:
        batches = ((b, b.column("category").to_pylist(), np.full(b.num_rows, np.nan, np.float32))
                   for b in iter_batches(input_dir, info))
    for batch, categories, scores in batches:
        if cfg.token_column not in batch.schema.names:
            raise KilnError(f"mix.token_column: the input has no column {cfg.token_column!r}")
        if cfg.unknown_category != "drop":
            categories = [cfg.unknown_category if c == UNKNOWN else c for c in categories]
        tokens = batch.column(cfg.token_column).to_numpy(zero_copy_only=False).astype(np.float64)
        yield batch, _Columns(batch.column("doc_id").to_numpy(), categories, scores, batch.column("source").to_pylist(),
                              tokens)


def _is_validation(doc_ids: np.ndarray, cfg: MixConfig) -> np.ndarray:
    return unit_interval(doc_ids, cfg.seed) < cfg.validation_fraction


def _train_classifier(cfg: MixConfig, input_dir: Path, work: Path, log: logging.Logger) -> None:
    """Train the category classifier on the training split's categorized documents (once per run)."""
    ccfg = cfg.classifier
    if (work / REPORT_NAME).exists():
        report = load_report(work)
    else:
        sampler = ExampleSampler(ccfg.max_examples_per_category, ccfg.max_chars, ccfg.seed)
        for info in require_manifest(input_dir).shards:
            for batch in iter_batches(input_dir, info):
                doc_ids = batch.column("doc_id").to_numpy()
                train = ~_is_validation(doc_ids, cfg)
                rows = pa.array(np.nonzero(train)[0])
                sampler.add(doc_ids[train], batch.column("text").take(rows).to_pylist(),
                            batch.column("category").take(rows).to_pylist())
        if not sampler.seen and not ccfg.labelled_sample:
            model_dir = Path(ccfg.default_model).expanduser() if ccfg.default_model else default_model_dir()
            report = use_default_model(model_dir, work)
            log.info("mix: no categorized document in the training split: using Kiln's default category model "
                     "(%s), trained on its seed set %s", model_dir, report.trained_on)
        else:
            labelled = read_labelled_sample(Path(ccfg.labelled_sample), ccfg.max_chars) if ccfg.labelled_sample else []
            start = time.perf_counter()
            report = train_classifier(sampler, labelled, ccfg, work)
            log.info("mix: category classifier trained on %s in %.1f s", report.trained_on, time.perf_counter() - start)
    log.info("mix: category classifier %s (%s); threshold %g", held_out_summary(report.held_out_accuracy,
                                                                               report.held_out),
             ", ".join(f"{c} {a:.2f}" for c, a in report.accuracy_by_category.items()), report.threshold)


def _label_shards(cfg: KilnConfig, input_dir: Path, work: Path, log: logging.Logger) -> None:
    """One Ray task per input shard labels its unknown documents (stages/mix/labels.py)."""
    shards = require_manifest(input_dir).shards
    calls = [(str(input_dir), info.to_dict(), str(work), cfg.mix.classifier, i) for i, info in enumerate(shards)]
    run_tasks(label_task, calls, cfg, "mix category labels", log, "mix.labels")


def prepare(cfg: KilnConfig, input_dir: Path | None, stage_dir: Path, log: logging.Logger) -> None:
    """Train the category classifier if enabled, count training tokens per category/source and write the plan
    (once per run)."""
    path = stage_dir / WORK_DIR / PLAN
    if path.exists():
        return
    mcfg = cfg.mix
    if mcfg.classifier.enabled:
        _train_classifier(mcfg, input_dir, stage_dir / WORK_DIR, log)
        _label_shards(cfg, input_dir, stage_dir / WORK_DIR, log)
    available: dict[str, dict[str, float]] = {}
    documents = tokens_total = 0.0
    seen = Counter()
    for index, info in enumerate(require_manifest(input_dir).shards):
        for _, cols in _batches(input_dir, info, index, stage_dir, mcfg):
            doc_ids, categories, sources, tokens = cols.doc_ids, cols.categories, cols.sources, cols.tokens
            train = ~_is_validation(doc_ids, mcfg)
            seen.update({"documents": len(train), "validation": int((~train).sum()),
                         "unknown": sum(c == UNKNOWN for c in categories)})
            for category, source, count, is_train in zip(categories, sources, tokens, train, strict=True):
                if is_train and category != UNKNOWN:
                    per_source = available.setdefault(category, {})
                    per_source[source] = per_source.get(source, 0.0) + count
                    documents += 1
                    tokens_total += count
    _check_splits(seen, documents, mcfg)
    if mcfg.budget_tokens is not None:
        budget = float(mcfg.budget_tokens)
    elif mcfg.budget_documents is not None:
        budget = mcfg.budget_documents * tokens_total / max(documents, 1)
    else:
        budget = tokens_total
    plan = make_plan(available, mcfg.category_weights, mcfg.alpha, mcfg.max_epochs, budget)
    for warning in plan.warnings:
        log.warning("mix: %s", warning)
    log.info("mix: %s training tokens available, budget %s", f"{tokens_total:,.0f}", f"{budget:,.0f}")
    atomic_write_json(path, {"budget": budget, **plan.to_dict()}, indent=1, sort_keys=True)


def _check_splits(seen: Counter, train_documents: float, mcfg: MixConfig) -> None:
    """Refuse before any work a mix that would leave the training or the validation split empty."""
    total = seen["documents"]
    if mcfg.unknown_category == "drop" and seen["unknown"] > mcfg.max_unknown_fraction * total:
        raise KilnError(
            f"mix: {seen['unknown']:,} of the {total:,} input documents ({seen['unknown'] / total:.0%}) have category "
            f"{UNKNOWN!r} and would be dropped (mix.max_unknown_fraction {mcfg.max_unknown_fraction:g}): map their "
            "sources to categories (ingest.source_categories, a category field in the records via "
            "ingest.fields.category, or ingest.url_categories), let a classifier label them from the ones you "
            "mapped (mix.classifier.enabled), or set mix.unknown_category to a category to put them in")
    if not train_documents:
        raise KilnError(
            f"mix: none of the {total:,} input documents can be trained on ({seen['unknown']:,} have category "
            f"{UNKNOWN!r}, {seen['validation']:,} go to validation): give the corpus categories "
            "(ingest.source_categories, or a category field in the records), or set mix.unknown_category")
    if mcfg.validation_fraction > 0 and not seen["validation"]:
        raise KilnError(
            f"mix: mix.validation_fraction {mcfg.validation_fraction:g} of {total:,} documents selects none, and "
            f"training would fail at its first evaluation: raise it (e.g. to {min(max(5 / total, 2 * mcfg.validation_fraction), 0.5):.3g}), add documents, "
            "or set it to 0 for no validation split")


def _load_plan(stage_dir: Path) -> MixPlan:
    data = json.loads((stage_dir / WORK_DIR / PLAN).read_text())
    data.pop("budget")
    return MixPlan.from_dict(data)


def _tally(categories: list[str], sources: list[str], langs: list[str], tokens: np.ndarray) -> dict:
    by_category: Counter = Counter()
    by_source: Counter = Counter()
    by_lang: Counter = Counter()
    for category, source, lang, count in zip(categories, sources, langs, tokens.tolist(), strict=True):
        by_category[category] += count
        by_source[f"{category}/{source}"] += count
        by_lang[lang or "?"] += count
    return {"category": dict(by_category), "source": dict(by_source), "lang": dict(by_lang)}


def process(unit: WorkUnit, ctx: UnitContext) -> None:
    """Split and repeat the documents of one input shard according to the plan."""
    mcfg = ctx.cfg.mix
    plan = _load_plan(ctx.stage_dir)
    for batch, cols in _batches(ctx.input_dir, ShardInfo(**unit.spec["shard"]), unit.index, ctx.stage_dir, mcfg):
        ctx.count_in(batch.num_rows)
        doc_ids, categories, sources, tokens = cols.doc_ids, cols.categories, cols.sources, cols.tokens
        langs = batch.column("lang").to_pylist()
        validation = _is_validation(doc_ids, mcfg)
        unknown = np.array([c == UNKNOWN for c in categories]) & ~validation
        epochs = np.array([plan.epochs.get(f"{c}/{s}", 0.0) for c, s in zip(categories, sources, strict=True)])
        copies = np.where(validation | unknown, 1, repeats(epochs, unit_interval(doc_ids, mcfg.seed + 1)))
        table = pa.Table.from_batches([batch])
        if mcfg.classifier.enabled:
            table = table.set_column(table.schema.get_field_index("category"), "category", category_array(categories))
        table = (table.append_column("category_score", pa.array(cols.category_scores, pa.float32()))
                 .append_column("repeat", pa.array(copies, pa.int32())))
        train = ~validation & ~unknown & (copies > 0)
        ctx.keep(table.filter(pa.array(train)))
        if validation.any():
            ctx.keep(table.filter(pa.array(validation)), output=VALIDATION)
        for reason, mask in (("unknown_category", unknown), ("downsampled", ~validation & ~unknown & (copies == 0))):
            rows = np.nonzero(mask)[0]
            if rows.size:
                ctx.drop(reason, table.take(pa.array(rows)), signal=[f"epochs={epochs[i]:.3f}" for i in rows])
        picked = np.nonzero(train)[0]
        held = np.nonzero(validation)[0]
        predicted = ~np.isnan(cols.category_scores)
        ctx.add_stats({
            "classified": dict(Counter(categories[i] for i in np.nonzero(predicted)[0])),
            "realized_tokens": _tally([categories[i] for i in picked], [sources[i] for i in picked],
                                      [langs[i] for i in picked], tokens[picked] * copies[picked]),
            "validation_tokens": _tally([categories[i] for i in held], [sources[i] for i in held],
                                        [langs[i] for i in held], tokens[held]),
        })


def finalize(cfg: KilnConfig, stage_dir: Path, results: list[UnitResult], details: dict,
             log: logging.Logger) -> dict:
    """Write mix_summary.json: planned vs realized tokens per category, source and language (``details``: the
    units' merged stats)."""
    plan = json.loads((stage_dir / WORK_DIR / PLAN).read_text())
    realized = details.get("realized_tokens", {"category": {}, "source": {}, "lang": {}})
    planned_total = sum(plan["category_budget"].values()) or 1.0
    realized_total = sum(realized["category"].values()) or 1.0
    categories = sorted(set(plan["category_budget"]) | set(realized["category"]))
    summary = {
        "budget_tokens": plan["budget"],
        "unplaced_tokens": plan["unplaced"],
        "warnings": plan["warnings"],
        "categories": {
            c: {"planned_tokens": plan["category_budget"].get(c, 0.0),
                "planned_share": plan["category_budget"].get(c, 0.0) / planned_total,
                "realized_tokens": realized["category"].get(c, 0.0),
                "realized_share": realized["category"].get(c, 0.0) / realized_total}
            for c in categories
        },
        "sources": {
            s: {"planned_tokens": plan["source_tokens"].get(s, 0.0), "epochs": plan["epochs"].get(s, 0.0),
                "realized_tokens": realized["source"].get(s, 0.0)}
            for s in sorted(set(plan["source_tokens"]) | set(realized["source"]))
        },
        "languages": {"realized_tokens": realized["lang"]},
        "validation_tokens": details.get("validation_tokens", {}),
    }
    outputs = {"summary": [SUMMARY]}
    if cfg.mix.classifier.enabled:
        for name in (MODEL_NAME, REPORT_NAME):  # published beside the summary; _work/ keeps the run's copy
            atomic_write_bytes(stage_dir / name, (stage_dir / WORK_DIR / name).read_bytes())
        summary["classifier"] = {**load_report(stage_dir).to_dict(), "labelled": details.get("classified", {})}
        outputs["classifier"] = [MODEL_NAME, REPORT_NAME]
    for category, row in summary["categories"].items():
        log.info("mix: %-13s planned %5.1f %%  realized %5.1f %%", category, 100 * row["planned_share"],
                 100 * row["realized_share"])
    atomic_write_json(stage_dir / SUMMARY, summary, indent=1, sort_keys=True)
    return {name: [ShardInfo(path=file, rows=len(categories) if file == SUMMARY else 1,
                             bytes=(stage_dir / file).stat().st_size, sha256=file_sha256(stage_dir / file))
                   for file in files]
            for name, files in outputs.items()}


STAGE = MapStage(
    name="mix", output_schema=input_schema_with(pa.field("category_score", pa.float32()), pa.field("repeat", pa.int32())),
    plan=shard_plan, process=process, prepare=prepare, finalize=finalize,
)
