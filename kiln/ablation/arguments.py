"""The options of `kiln ablate`, kept apart from the ablation itself so that building the `kiln` parser imports
no stage (a stage's image holds only its own stage)."""

from __future__ import annotations

import argparse
from pathlib import Path

from common.config_loader import REPO_ROOT
from kiln import pipeline

DEFAULT_TRAIN_PYTHON = REPO_ROOT / ".venv-train" / "bin" / "python"

DESCRIPTION = """Train the same small model on the output of successive stages of one pipeline run and report
held-out bits per byte: does this configuration of filters make the model better, and which stage buys how much?

Runs (or resumes) the pipeline as `kiln run` does, on --input or the demo corpus, then under DATA_DIR/ablation:
  1. evaluation sets: the clean held-out set (ablation.heldout_documents documents the pipeline keeps, or
     ablation.heldout_path) and the mix's validation split, removed from every arm with their copies and
     near-duplicates (the dedup stage's MinHash settings, on raw and cleaned text);
  2. one byte-level BPE tokenizer (ablation.vocab_size) trained on the dedup stage's output without them;
  3. the arms: raw (ingest), clean, dedup, full (mix's training split, repeats included) and
     ablation.extra_arms, each sampled (seeded) to the same token budget, ablation.tokens_per_run;
  4. one run per arm and seed (ablation.seeds) of ablation.train_config in the trainer's environment: the
     same model, steps, schedule and seeds everywhere; held-out loss logged ablation.eval_points times;
  5. summary.json (bits per byte and loss per token per arm, mean and 95 % interval over the seeds, the
     paired delta against raw, which intervals overlap) and the report's ablation section (DATA_DIR/report).
A killed ablation resumes: finished arms and runs are reused, an unfinished run resumes from its last
checkpoint. --force rebuilds the ablation (and reruns the pipeline)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kiln ablate`: those of `kiln run`, and the trainer's Python."""
    pipeline.add_arguments(parser)
    parser.description = DESCRIPTION
    parser.add_argument("--train-python", type=Path, default=DEFAULT_TRAIN_PYTHON, metavar="PYTHON",
                        help="Python of the trainer's environment, with MindSpore (default .venv-train/bin/python, "
                             "which `make train-venv` creates)")
