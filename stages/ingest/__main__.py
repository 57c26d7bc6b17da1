"""`python -m stages.ingest`: read raw files into document shards under <data_dir>/ingest/."""

import json
import sys

from common.stage_cli import run_from_args, stage_parser
from stages.ingest.stage import STAGE

DESCRIPTION = """Read raw input into Arrow document shards (<data_dir>/ingest/part-NNNNN.arrow).

Inputs: .jsonl/.ndjson (plain, .gz, .zst), .parquet, and folders of .txt files (one
document per file). Files are split into work units of about ingest.shard_max_bytes and
processed in parallel on Ray. Bad records are dropped under a counted reason (bad_json,
bad_utf8, missing_text, empty_text, oversize) and written to _excluded/<reason>/."""


def main(argv: list[str] | None = None) -> int:
    parser = stage_parser("ingest", DESCRIPTION)
    parser.add_argument("--input", nargs="+", metavar="PATH",
                        help="files, folders or globs to read (overrides ingest.input)")
    args = parser.parse_args(argv)
    overrides = [f"ingest.input={json.dumps(args.input)}"] if args.input else []
    return run_from_args(STAGE, args, overrides)


if __name__ == "__main__":
    sys.exit(main())
