"""The ingest stage: raw files in, document shards out, every bad record counted."""

from __future__ import annotations

import json

from common.config import FieldMap
from common.errors import UnreadableFileError
from common.runner import MapStage, UnitContext, WorkUnit
from common.schema import DOC_SCHEMA
from stages.ingest.plan import plan
from stages.ingest.readers import BadRecord, RawRecord, read_unit
from stages.ingest.records import DocumentBuilder


def _raw_text(record: RawRecord) -> str:
    """The record as JSON for the exclusion file (unpaired surrogates become '?')."""
    text = json.dumps(record.fields, ensure_ascii=False, default=str)
    return text.encode("utf-8", errors="replace").decode("utf-8")


def _ingest_records(unit: WorkUnit, ctx: UnitContext) -> None:
    cfg = ctx.cfg.ingest
    spec = unit.spec
    fields = FieldMap() if spec["format"] == "txt" else cfg.fields
    builder = DocumentBuilder(unit.index, cfg, fields, spec["source"])
    for item in read_unit(spec):
        ctx.count_in()
        if isinstance(item, BadRecord):
            ctx.drop(item.reason, [{"text": item.raw, "location": item.location}], signal=item.detail)
            continue
        rejected = builder.add(item)
        if rejected is not None:
            raw = item.fields.get(fields.text) if rejected.reason == "oversize" else _raw_text(item)
            source_id = str(item.fields.get(fields.id) or "") or None
            ctx.drop(rejected.reason, [{"text": raw, "location": item.location, "source_id": source_id}],
                     signal=rejected.detail)
        elif len(builder) >= cfg.batch_rows:
            ctx.keep(builder.flush())
    ctx.keep(builder.flush())


def process(unit: WorkUnit, ctx: UnitContext) -> None:
    """Read one unit's records; keep valid documents, drop the rest under a named reason."""
    spec = unit.spec
    if spec["format"] != "unreadable":
        try:
            _ingest_records(unit, ctx)
            return
        except UnreadableFileError as err:
            if not ctx.cfg.ingest.skip_bad_files:
                raise
            ctx.discard()
            spec = spec | {"error": str(err)}
    ctx.warn(f"skipped unreadable file (ingest.skip_bad_files): {spec['error']}")
    ctx.count_in()
    ctx.drop("bad_file", [{"text": "", "location": spec["name"]}], signal=spec["error"])


STAGE = MapStage(name="ingest", output_schema=DOC_SCHEMA, plan=plan, process=process)
