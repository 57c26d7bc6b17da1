"""`python -m stages`: run every data stage in order (what `make data` runs).

With --demo it first writes the built-in demo corpus under <data_dir>/demo/ (once per seed
and size) and reads that; otherwise it reads --input (or ingest.input from the config).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from common.config import REPO_ROOT, load_config
from common.errors import KilnError
from common.log import setup_logging
from common.runner import run_stage
from common.status import format_status, stage_status, token_summary
from stages.clean.stage import STAGE as CLEAN
from stages.dedup.stage import STAGE as DEDUP
from stages.ingest.stage import STAGE as INGEST
from stages.mix.stage import STAGE as MIX
from stages.tokenize.stage import STAGE as TOKENIZE

PIPELINE = (INGEST, CLEAN, DEDUP, MIX, TOKENIZE)
DEMO_CONFIG = REPO_ROOT / "configs" / "demo.yaml"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m stages",
        description="Run the whole Kiln data pipeline: " + " -> ".join(s.name for s in PIPELINE) + ".",
        epilog="Each stage resumes where it stopped; a stage whose configuration changed needs --force.",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--input", nargs="+", metavar="PATH", help="files, folders or globs to ingest")
    source.add_argument("--demo", action="store_true",
                        help="generate and use the built-in demo corpus (adds configs/demo.yaml)")
    parser.add_argument("--demo-docs", type=int, default=None, metavar="N",
                        help="records in the demo corpus (default: demo.n_docs)")
    parser.add_argument("--config", action="append", type=Path, default=[], metavar="FILE",
                        help="YAML file layered over configs/default.yaml (repeatable)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                        help="override one config key (repeatable)")
    parser.add_argument("--data-dir", type=Path, default=None, help="root of the run (default: config data_dir)")
    parser.add_argument("--force", action="store_true", help="rerun every stage from scratch")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on the console")
    return parser


def _prepare_demo(data_dir: Path, n_docs: int, seed: int) -> Path:
    """Write the demo corpus unless one with the same size and seed is already there."""
    from common.demo.generator import generate_demo_corpus

    demo_dir = data_dir / "demo"
    summary = demo_dir / "demo.json"
    if summary.exists():
        recorded = json.loads(summary.read_text())
        if recorded.get("n_docs") == n_docs and recorded.get("seed") == seed:
            return demo_dir / "corpus"
    print(f"writing the demo corpus ({n_docs} records, seed {seed}) to {demo_dir}", file=sys.stderr)
    generate_demo_corpus(demo_dir, n_docs=n_docs, seed=seed)
    return demo_dir / "corpus"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    overrides = list(args.overrides)
    configs = list(args.config)
    if args.demo:
        configs.insert(0, DEMO_CONFIG)
        if args.demo_docs is not None:
            overrides.append(f"demo.n_docs={args.demo_docs}")
    try:
        cfg = load_config(configs, overrides)
        data_dir = Path(args.data_dir or cfg.data_dir)
        if args.demo:
            corpus = _prepare_demo(data_dir, cfg.demo.n_docs, cfg.demo.seed)
            cfg = load_config(configs, [*overrides, f"ingest.input={json.dumps([str(corpus)])}"])
        elif args.input:
            cfg = load_config(configs, [*overrides, f"ingest.input={json.dumps(args.input)}"])
        for stage in PIPELINE:
            log = setup_logging(data_dir / stage.name, stage.name, verbose=args.verbose)
            run_stage(stage, cfg, data_dir, force=args.force, log=log)
    except KilnError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(format_status(stage_status(data_dir)))
    if tokens := token_summary(data_dir):
        print(tokens)
    return 0


if __name__ == "__main__":
    sys.exit(main())
