"""`python -m stages.dedup`: exact and MinHash-LSH near-duplicate removal over the clean shards."""

import sys

from common.stage_cli import run_from_args, stage_parser
from stages.dedup.stage import STAGE

DESCRIPTION = """Remove exact and near duplicates from <data_dir>/clean into <data_dir>/dedup.

Exact duplicates share a normalized-text hash; near duplicates share an LSH band of their
MinHash signatures (dedup.bands × dedup.rows) and a signature Jaccard of at least
dedup.threshold. Each cluster keeps one document (dedup.category_priority, then
dedup.quality_signal, then the lowest doc_id), which records dup_cluster_size; the others go
to _excluded/exact_dup/ and _excluded/near_dup/ naming the document kept. Signatures and LSH
partitions are computed on Ray and saved under _work/, so a rerun resumes."""


def main(argv: list[str] | None = None) -> int:
    return run_from_args(STAGE, stage_parser("dedup", DESCRIPTION).parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
