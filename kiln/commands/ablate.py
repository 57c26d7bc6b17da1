"""`kiln ablate`: one small model trained per stage's output of a pipeline run, compared on held-out text."""

from __future__ import annotations

import argparse

from kiln.ablation import arguments

HELP = "train one small model per pipeline stage's output and compare held-out bits per byte (make ablation)"

add_arguments = arguments.add_arguments


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the pipeline, then the ablation."""
    from kiln.ablation.command import run as ablate

    return ablate(args)
