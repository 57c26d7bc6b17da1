"""`kiln report`: an HTML page with charts of every finished stage of a run."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "an HTML page with charts of every finished stage (DATA_DIR/report)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kiln report`."""
    parser.add_argument("data_dir", type=Path, help="root of a run (make data's DATA_DIR)")
    parser.add_argument("--out", type=Path, help="folder for index.html and its PNG charts (default: DATA_DIR/report)")


def run(args: argparse.Namespace) -> int:
    """Write the page and print its path."""
    from kiln.report import write_report

    print(write_report(args.data_dir, args.out))
    return 0
