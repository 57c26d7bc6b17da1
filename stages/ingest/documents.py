"""The documents ingest makes of some input files, read in this process into one table (no Ray, no
output folder): for benchmarks and tests that need the texts the later stages see."""

from __future__ import annotations

import pyarrow as pa

from common.config import KilnConfig
from common.schema import DOC_SCHEMA
from stages.ingest.config import FieldMap
from stages.ingest.plan import plan_units, resolve_inputs
from stages.ingest.readers import RawRecord, read_unit
from stages.ingest.records import DocumentBuilder


def read_documents(inputs: list[str], cfg: KilnConfig) -> pa.Table:
    """The documents ingest makes of ``inputs`` (files, folders or globs), bad records left out."""
    files, _ = resolve_inputs(inputs)
    batches = []
    for index, spec in enumerate(plan_units(files, cfg.ingest)):
        fields = FieldMap() if spec["format"] == "txt" else cfg.ingest.fields
        builder = DocumentBuilder(index, cfg.ingest, fields, spec["source"])
        for item in read_unit(spec):
            if isinstance(item, RawRecord):
                builder.add(item)
        batches.append(builder.flush())
    return pa.Table.from_batches(batches, schema=DOC_SCHEMA)
