"""The order of the data stages: each stage reads the output folder of the one before it."""

from __future__ import annotations

STAGE_ORDER = ("ingest", "clean", "dedup", "mix", "tokenize")
# a stage folder is finished when it holds this file (common/manifest.py writes and reads it)
MANIFEST_NAME = "_manifest.json"


def input_stage_of(name: str) -> str | None:
    """The stage whose output ``name`` reads (None for the first stage)."""
    if name not in STAGE_ORDER:
        raise ValueError(f"{name!r} is not a data stage; the pipeline is {' -> '.join(STAGE_ORDER)}")
    index = STAGE_ORDER.index(name)
    return STAGE_ORDER[index - 1] if index else None
