"""`kiln eval-truth`: score a stage's output of a run of the demo corpus (or a development set) against its
ground truth.

Reading a run's output takes the data stages' libraries (pyarrow) and the clean stage's name for its removed
lines, so this lives on the data side, in kiln; the scoring itself is demo.truth's, which uses only common."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common.errors import KilnError
from common.pipeline import STAGE_ORDER

HELP = "score a stage's output against the demo corpus ground truth"
DOCUMENT_STAGES = tuple(s for s in STAGE_ORDER if s != "tokenize")


def read_kept_texts(stage_dir: Path) -> dict[str, str]:
    """source_id -> text of every document in a finished stage's output (checksums verified)."""
    from common.manifest import require_manifest
    from common.shards import iter_batches

    manifest = require_manifest(stage_dir)
    kept: dict[str, str] = {}
    for info in manifest.document_files():
        for batch in iter_batches(stage_dir, info):
            kept.update(zip(batch.column("source_id").to_pylist(), batch.column("text").to_pylist(), strict=True))
    return kept


def read_line_filtered(clean_dir: Path) -> set[str]:
    """source_id of every document whose lines the clean stage's line filters removed (its ``_removed_lines``)."""
    from common.manifest import read_manifest
    from common.shards import iter_batches
    from stages.clean.stage import REMOVED_LINES

    manifest = read_manifest(clean_dir)
    if manifest is None:  # clean has not run: no line was removed
        return set()
    return {source_id for info in manifest.outputs.get(REMOVED_LINES, [])
            for batch in iter_batches(clean_dir, info) for source_id in batch.column("source_id").to_pylist()}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kiln eval-truth`."""
    parser.add_argument("data_dir", type=Path, help="root of a run of the demo corpus")
    parser.add_argument("--stage", choices=DOCUMENT_STAGES,
                        help="stage to score (default: the last finished one that holds documents)")
    parser.add_argument("--truth", type=Path, help="demo folder holding truth.jsonl (default: DATA_DIR/demo)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    """Print the score of the chosen stage (as a table, or JSON); for ingest, also its outcomes against the
    truth's."""
    from common.manifest import require_manifest
    from demo.truth import format_ingest_outcomes, load_truth, score
    from kiln.status import stage_status

    data_dir: Path = args.data_dir
    demo_dir = args.truth or data_dir / "demo"
    if not (demo_dir / "truth.jsonl").exists():
        raise KilnError(f"{demo_dir}/truth.jsonl not found: score a run of the demo corpus, or pass --truth DEMO_DIR")
    stage = args.stage or next(
        (s.stage for s in reversed(stage_status(data_dir)) if s.state == "done" and s.stage in DOCUMENT_STAGES), None)
    if stage is None:
        raise KilnError(f"no finished stage with documents under {data_dir}")
    truth = load_truth(demo_dir)
    line_filtered = read_line_filtered(data_dir / "clean") if stage != "ingest" else set()
    report = score(truth, read_kept_texts(data_dir / stage), line_filtered)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return 0
    print(f"ground truth {demo_dir}/truth.jsonl vs. the output of stage `{stage}`")
    print(report.format_table())
    if stage == "ingest":
        accounting = require_manifest(data_dir / "ingest").accounting
        print("\n" + format_ingest_outcomes(truth, {"ok": accounting.docs_out, **accounting.dropped}))
    return 0
