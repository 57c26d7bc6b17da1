"""`kiln demo`: write the deterministic demo corpus and its ground truth."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "write the deterministic demo corpus and its ground truth"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kiln demo`."""
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--docs", type=int, default=20000, help="records to write (default 20000)")
    parser.add_argument("--seed", type=int, default=1234)


def run(args: argparse.Namespace) -> int:
    """Write the corpus and its truth under OUT_DIR and print what was planted."""
    from demo.generator import generate_demo_corpus

    summary = generate_demo_corpus(args.out_dir, n_docs=args.docs, seed=args.seed)
    print(f"wrote the demo corpus to {args.out_dir}/corpus and its ground truth to {args.out_dir}/truth.jsonl")
    print(summary)
    return 0
