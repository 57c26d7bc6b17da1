"""`kiln status`: what every stage of a run has done, its packed tokens and its ablation."""

from __future__ import annotations

import argparse
from pathlib import Path

from common.errors import KilnError

HELP = "one table of every stage: state, documents, drops, bytes, time"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kiln status`."""
    parser.add_argument("data_dir", type=Path, help="root of a run (make data's DATA_DIR)")


def run(args: argparse.Namespace) -> int:
    """Print the status table, then the token summary and the ablation's state when there are any."""
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
