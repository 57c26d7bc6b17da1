"""The command line every stage shares: config layers, overrides, data dir, --force."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from common.config import KilnConfig, load_config
from common.errors import KilnError
from common.log import setup_logging
from common.runner import MapStage, run_stage

CONFIG_EPILOG = (
    "Configuration: configs/default.yaml holds every key with its default; each --config file\n"
    "is layered on top in order, then each --set KEY=VALUE (e.g. --set ingest.batch_rows=1024).\n"
    "A rerun with the same configuration resumes; a different one needs --force."
)


def add_run_options(parser: argparse.ArgumentParser, force_help: str) -> None:
    """Add the options of every run (one stage or the whole pipeline): --config, --set, --data-dir, --force, -v."""
    parser.add_argument("--config", action="append", type=Path, default=[], metavar="FILE",
                        help="YAML file layered over configs/default.yaml (repeatable)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                        help="override one config key (repeatable)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="root folder of the run on the shared volume (default: config data_dir)")
    parser.add_argument("--force", action="store_true", help=force_help)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on the console")


def stage_parser(name: str, description: str) -> argparse.ArgumentParser:
    """An argument parser with the options every stage accepts."""
    parser = argparse.ArgumentParser(
        prog=f"python -m stages.{name}",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=CONFIG_EPILOG,
    )
    add_run_options(parser, "discard this stage's previous output and start over")
    return parser


def run_from_args(stage: MapStage, args: argparse.Namespace, overrides: list[str] | None = None) -> int:
    """Load the config, set up logging in the stage folder, run the stage; 0 on success, 2 on a user error."""
    try:
        cfg: KilnConfig = load_config(args.config, [*args.overrides, *(overrides or [])])
        data_dir = Path(args.data_dir or cfg.data_dir)
        log = setup_logging(data_dir / stage.name, stage.name, verbose=args.verbose)
        run_stage(stage, cfg, data_dir, force=args.force, log=log)
    except KilnError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0
