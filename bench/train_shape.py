"""The model shape and timing arguments that bench/train.py hands to both of its workers (stdlib only)."""

from __future__ import annotations

import argparse
from pathlib import Path

SHAPE_KEYS = ("vocab", "d_model", "layers", "heads", "seq_len", "batch", "threads", "steps", "warmup", "seed")


def shape_args(args: argparse.Namespace) -> list[str]:
    """The command-line flags that carry ``args``' model shape and timing to a worker."""
    flags = []
    for key in SHAPE_KEYS:
        flags += [f"--{key.replace('_', '-')}", str(getattr(args, key))]
    return flags


def worker_parser(description: str | None) -> argparse.ArgumentParser:
    """A worker's parser: the token file, the result file and every flag of :func:`shape_args`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("tokens", type=Path, help="packed .bin (with .idx and meta.json beside it)")
    parser.add_argument("result", type=Path, help="JSON file for the figures")
    for key in SHAPE_KEYS:
        parser.add_argument(f"--{key.replace('_', '-')}", type=int, required=True)
    parser.add_argument("--phases", type=int, default=0, help="rounds of the forward/backward/optimizer breakdown")
    return parser
