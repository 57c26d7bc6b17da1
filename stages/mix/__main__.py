"""`python -m stages.mix`: validation split and category-balanced repeats of the dedup output."""

import sys

from common.stage_cli import run_from_args, stage_parser
from stages.mix.stage import STAGE

DESCRIPTION = """Mix <data_dir>/dedup into <data_dir>/mix (training shards) and <data_dir>/mix/validation/.

A seeded hash of each document id holds out mix.validation_fraction for validation. The
training budget is split over categories by mix.category_weights (default 3:2:2:1:1:1 over
academic, tech_docs, encyclopedia, news, literature, dialogue) and inside a category over
sources by p^alpha (mix.alpha = 0.7), with no source repeated more than mix.max_epochs
times. Each training document gets a `repeat` count (⌊e⌋, plus one by a seeded draw with
probability frac(e)); documents drawn zero times are counted as `downsampled`.
mix_summary.json records planned and realized tokens per category, source and language."""


def main(argv: list[str] | None = None) -> int:
    return run_from_args(STAGE, stage_parser("mix", DESCRIPTION).parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
