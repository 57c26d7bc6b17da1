"""The ingest stage: raw files in, document shards out, every bad record counted."""

from __future__ import annotations

import json
from collections import Counter

from common.errors import UnreadableFileError
from common.runner import MapStage, UnitContext, WorkUnit
from common.schema import DOC_SCHEMA
from stages.ingest.config import FieldMap
from stages.ingest.plan import plan
from stages.ingest.readers import BadRecord, RawRecord, read_unit
from stages.ingest.records import DocumentBuilder


def _raw_text(record: RawRecord) -> str:
    """The record as JSON for the exclusion file (unpaired surrogates become '?')."""
    text = json.dumps(record.fields, ensure_ascii=False, default=str)
    return text.encode("utf-8", errors="replace").decode("utf-8")


# a unit of at least MOSTLY_BAD_MIN records, at least half of them dropped for one file-level cause, gets a
# warning that names the cause, besides the per-record counts
MOSTLY_BAD_MIN = 10
UNDECODABLE = ("bad_utf8", "bad_json")


def _file_warnings(name: str, records: int, dropped: Counter, fields_seen: Counter, text_field: str) -> list[str]:
    """What a person should hear once about a file whose records mostly fail for one reason."""
    if records < MOSTLY_BAD_MIN:
        return []
    warnings = []
    undecodable = sum(dropped[r] for r in UNDECODABLE)
    if undecodable * 2 >= records:
        warnings.append(f"{name}: {undecodable:,} of {records:,} records are not UTF-8 JSON ("
                        + ", ".join(f"{r} {dropped[r]:,}" for r in UNDECODABLE if dropped[r])
                        + "): is it a binary file, or another format under a .jsonl name?")
    if dropped["no_text_field"] * 2 >= records:
        common = sorted(fields_seen.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
        seen = ", ".join(f"{field!r}" for field, _ in common) or "none"
        warnings.append(f"{name}: {dropped['no_text_field']:,} of {records:,} records have no text field "
                        f"{text_field!r} (ingest.fields.text); its records have the fields {seen}: set "
                        "ingest.fields.text to the one that holds the text")
    return warnings


def _ingest_records(unit: WorkUnit, ctx: UnitContext) -> None:
    cfg = ctx.cfg.ingest
    spec = unit.spec
    fields = FieldMap() if spec["format"] == "txt" else cfg.fields
    builder = DocumentBuilder(unit.index, cfg, fields, spec["source"])
    records, dropped, fields_seen = 0, Counter(), Counter()
    for item in read_unit(spec):
        ctx.count_in()
        records += 1
        if isinstance(item, BadRecord):
            dropped[item.reason] += 1
            ctx.drop(item.reason, [{"text": item.raw, "location": item.location}], signal=item.detail)
            continue
        rejected = builder.add(item)
        if item.encoding is not None and rejected is None:
            transcoded = ctx.stats.setdefault("transcoded", {})
            transcoded[item.encoding] = transcoded.get(item.encoding, 0) + 1
        if rejected is not None:
            dropped[rejected.reason] += 1
            if fields.text not in item.fields:
                dropped["no_text_field"] += 1
                fields_seen.update(item.fields.keys())
            raw = item.fields.get(fields.text) if rejected.reason == "oversize" else _raw_text(item)
            source_id = str(item.fields.get(fields.id) or "") or None
            ctx.drop(rejected.reason, [{"text": raw, "location": item.location, "source_id": source_id}],
                     signal=rejected.detail)
        elif len(builder) >= cfg.batch_rows:
            ctx.keep(builder.flush())
    ctx.keep(builder.flush())
    for warning in _file_warnings(spec["name"], records, dropped, fields_seen, fields.text):
        ctx.warn(warning)


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
