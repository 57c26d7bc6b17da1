"""The trainer's inputs on a command line: `python -m stages.train` reads them and `kiln doctor` checks them
(standard library only: both run in the trainer's environment)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_trainer_inputs(parser: argparse.ArgumentParser, *, data_dir: str, tokens: str, config: str,
                       overrides: str) -> None:
    """Add --data-dir, --tokens, --config and --set (into ``overrides``), each with the help text given."""
    parser.add_argument("--data-dir", type=Path, default=Path("data"), help=data_dir)
    parser.add_argument("--tokens", type=Path, default=None, metavar="BIN", help=tokens)
    parser.add_argument("--config", type=Path, default=None, metavar="FILE", help=config)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help=overrides)


def train_split(args: argparse.Namespace) -> Path:
    """The training split those options name: --tokens, or DATA_DIR/tokenize/train.bin."""
    return args.tokens or args.data_dir / "tokenize" / "train.bin"
