"""The Arrow schemas every stage shares: documents and excluded (dropped) records."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from common.categories import CATEGORIES, UNKNOWN_CATEGORY

CATEGORY_VALUES = pa.array([*CATEGORIES, UNKNOWN_CATEGORY], type=pa.string())
CATEGORY_TYPE = pa.dictionary(pa.int8(), pa.string())

# doc_id = work-unit index * DOC_ID_STRIDE + row: dense inside a shard, stable across reruns.
DOC_ID_STRIDE = 1_000_000_000

DOC_SCHEMA = pa.schema(
    [
        pa.field("doc_id", pa.int64(), nullable=False),
        pa.field("source_id", pa.string()),
        pa.field("text", pa.large_string(), nullable=False),
        pa.field("source", pa.string()),
        pa.field("category", CATEGORY_TYPE),
        pa.field("lang", pa.string()),
        pa.field("lang_score", pa.float32()),
        pa.field("meta", pa.string()),
    ]
)

EXCLUDED_SCHEMA = pa.schema(
    [
        pa.field("doc_id", pa.int64()),
        pa.field("source_id", pa.string()),
        pa.field("source", pa.string()),
        pa.field("text", pa.large_string()),
        pa.field("reason", pa.string()),
        pa.field("signal", pa.string()),
        pa.field("location", pa.string()),
    ]
)

_CATEGORY_INDEX = {name: i for i, name in enumerate(CATEGORY_VALUES.to_pylist())}


def category_array(values: Sequence[str]) -> pa.DictionaryArray:
    """Encode categories against the one fixed dictionary, so every batch and shard shares it."""
    unknown = _CATEGORY_INDEX[UNKNOWN_CATEGORY]
    indices = pa.array([_CATEGORY_INDEX.get(v, unknown) for v in values], type=pa.int8())
    return pa.DictionaryArray.from_arrays(indices, CATEGORY_VALUES)


def doc_id(unit_index: int, row: int) -> int:
    """The stable id of row ``row`` of work unit ``unit_index``."""
    if row >= DOC_ID_STRIDE:
        raise ValueError(f"a shard may hold at most {DOC_ID_STRIDE} documents")
    return unit_index * DOC_ID_STRIDE + row
