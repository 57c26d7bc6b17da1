"""`kiln run`: every data stage in pipeline order (what `make data` runs).

With --demo it first writes the built-in demo corpus under <data_dir>/demo/ (once per seed
and size) and reads that; otherwise it reads --input (or ingest.input from the config).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

from common.config import KilnConfig, load_config
from common.config_loader import CONFIG_DIR
from common.errors import KilnError
from common.lock import data_dir_lock
from common.log import setup_logging
from common.pipeline import STAGE_ORDER
from common.runner import MapStage, run_stage
from common.stage_cli import CONFIG_EPILOG, add_run_options
from kiln.status import format_status, stage_status, token_summary

HELP = "run every data stage in order on --input or the demo corpus (make data)"
DESCRIPTION = "Run the whole Kiln data pipeline: " + " -> ".join(STAGE_ORDER) + "."
DEMO_CONFIG = CONFIG_DIR / "demo.yaml"


def pipeline_stages() -> list[MapStage]:
    """The stage objects, imported from ``stages.<name>.stage`` in pipeline order."""
    return [importlib.import_module(f"stages.{name}.stage").STAGE for name in STAGE_ORDER]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kiln run`."""
    parser.epilog = CONFIG_EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--input", nargs="+", metavar="PATH", help="files, folders or globs to ingest")
    source.add_argument("--demo", action="store_true",
                        help="generate and use the built-in demo corpus (adds configs/demo.yaml)")
    parser.add_argument("--demo-docs", type=int, default=None, metavar="N",
                        help="records in the demo corpus (default: demo.n_docs)")
    parser.add_argument("--eval-sets", nargs="+", type=Path, default=None, metavar="PATH",
                        help="evaluation sets to remove from the training data: CMMLU/C-Eval CSV files or folders of "
                             "them, JSONL, plain text (default: decontaminate.eval_sets, else Kiln's sample sets)")
    add_run_options(parser, "rerun every stage from scratch")


def _prepare_demo(data_dir: Path, n_docs: int, seed: int, force: bool) -> Path:
    """Write the demo corpus unless one with the same size and seed is already there. Another one is
    replaced only with ``force``: its truth is what `kiln eval-truth` scores the run's stages against."""
    from demo.generator import generate_demo_corpus

    demo_dir = data_dir / "demo"
    summary = demo_dir / "demo.json"
    if summary.exists():
        recorded = json.loads(summary.read_text())
        if recorded.get("n_docs") == n_docs and recorded.get("seed") == seed:
            return demo_dir / "corpus"
        if not force:
            raise KilnError(f"{data_dir} holds a run of the demo corpus with {recorded.get('n_docs')} records, seed "
                            f"{recorded.get('seed')}; {n_docs} records, seed {seed} would replace it and its truth: "
                            "add --force to rerun every stage on the new corpus, or use another --data-dir")
    print(f"writing the demo corpus ({n_docs} records, seed {seed}) to {demo_dir}", file=sys.stderr)
    generate_demo_corpus(demo_dir, n_docs=n_docs, seed=seed)
    return demo_dir / "corpus"


Then = Callable[[KilnConfig, Path, Callable[[list[str]], KilnConfig]], None]


def run(args: argparse.Namespace, then: Then | None = None) -> int:
    """Run (or resume) every stage, then ``then`` (given the config, the data folder and a function loading the
    config with more overrides) under the same lock; print the status table and the token summary."""
    overrides = list(args.overrides)
    configs = list(args.config)
    if args.demo:
        configs.insert(0, DEMO_CONFIG)
        if args.demo_docs is not None:
            overrides.append(f"demo.n_docs={args.demo_docs}")
    if args.eval_sets:
        overrides.append(f"decontaminate.eval_sets={json.dumps([str(p.resolve()) for p in args.eval_sets])}")
    cfg = load_config(configs, overrides)
    data_dir = Path(args.data_dir or cfg.data_dir)
    with data_dir_lock(data_dir, setup_logging(None, "kiln", verbose=args.verbose)):
        if args.demo:
            corpus = _prepare_demo(data_dir, cfg.demo.n_docs, cfg.demo.seed, args.force)
            overrides.append(f"ingest.input={json.dumps([str(corpus)])}")
        elif args.input:
            overrides.append(f"ingest.input={json.dumps(args.input)}")
        cfg = load_config(configs, overrides)
        run_stages(cfg, data_dir, args.force, args.verbose)
        if then is not None:
            then(cfg, data_dir, lambda extra: load_config(configs, [*overrides, *extra]))
    print(format_status(stage_status(data_dir)))
    if tokens := token_summary(data_dir):
        print(tokens)
    return 0


def run_stages(cfg: KilnConfig, data_dir: Path, force: bool, verbose: bool, last: str | None = None) -> None:
    """Run (or resume) the stages in order into ``data_dir``, up to ``last`` (default: all of them)."""
    for stage in pipeline_stages():
        log = setup_logging(data_dir / stage.name, stage.name, verbose=verbose)
        run_stage(stage, cfg, data_dir, force=force, log=log)
        if stage.name == last:
            break
