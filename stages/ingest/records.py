"""Turn raw input records into documents of the shared schema, or into counted drop reasons."""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field

import pyarrow as pa

from common.categories import CATEGORIES, UNKNOWN_CATEGORY
from common.schema import DOC_SCHEMA, category_array, doc_id
from stages.ingest.config import FieldMap, IngestConfig
from stages.ingest.readers import RawRecord
from stages.ingest.url_rules import UrlCategories


@dataclass(frozen=True)
class Rejected:
    """A decoded record that still cannot become a document."""

    reason: str
    detail: str


def _utf8_ok(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _as_text(value) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if _utf8_ok(text) else None


def category_for(source: str, raw_category, mapping: dict[str, str], url: str | None,
                 url_rules: UrlCategories) -> str:
    """The config's source mapping (exact name, then glob pattern) wins, then the record's own category,
    then the URL rules."""
    if source in mapping:
        return mapping[source]
    for pattern, category in mapping.items():
        if fnmatch.fnmatchcase(source, pattern):
            return category
    if isinstance(raw_category, str) and raw_category in CATEGORIES:
        return raw_category
    return url_rules.category(url)


@dataclass
class DocumentBuilder:
    """Accumulates documents of one work unit and emits them as record batches with dense ids."""

    unit_index: int
    cfg: IngestConfig
    fields: FieldMap
    default_source: str
    kept: int = 0
    _columns: dict[str, list] = field(default_factory=lambda: {n: [] for n in DOC_SCHEMA.names})
    _url_rules: UrlCategories = field(init=False)

    def __post_init__(self) -> None:
        self._url_rules = UrlCategories.from_config(self.cfg)

    def __len__(self) -> int:
        return len(self._columns["doc_id"])

    def add(self, record: RawRecord) -> Rejected | None:
        """Add ``record`` as a document, or say why it cannot be one."""
        values = record.fields
        raw_text = values.get(self.fields.text)
        if raw_text is None:
            return Rejected("missing_text", f"no {self.fields.text!r} field")
        if not isinstance(raw_text, str):
            return Rejected("missing_text", f"{self.fields.text!r} is a {type(raw_text).__name__}, not a string")
        if not _utf8_ok(raw_text):
            return Rejected("bad_utf8", "text holds unpaired surrogates")
        if not raw_text.strip():
            return Rejected("empty_text", "text is empty or whitespace")
        size = len(raw_text.encode("utf-8"))
        if size > self.cfg.max_doc_bytes:
            return Rejected("oversize", f"{size} bytes > ingest.max_doc_bytes={self.cfg.max_doc_bytes}")

        source = _as_text(values.get(self.fields.source)) or self.default_source
        raw_category = values.get(self.fields.category)
        url = _as_text(values.get(self.fields.url))
        category = category_for(source, raw_category, self.cfg.source_categories, url, self._url_rules)
        meta = {}
        if url:
            meta["url"] = url
        for name in self.cfg.meta_fields:
            value = _as_text(values.get(name))
            if value:
                meta[name] = value
        if raw_category is not None and category == UNKNOWN_CATEGORY:
            meta["category_raw"] = _as_text(raw_category) or ""

        columns = self._columns
        columns["doc_id"].append(doc_id(self.unit_index, self.kept))
        columns["source_id"].append(_as_text(values.get(self.fields.id)) or record.location)
        columns["text"].append(raw_text)
        columns["source"].append(source)
        columns["category"].append(category)
        columns["lang"].append(None)
        columns["lang_score"].append(None)
        columns["meta"].append(json.dumps(meta, ensure_ascii=False, sort_keys=True))
        self.kept += 1
        return None

    def flush(self) -> pa.RecordBatch:
        """The documents added since the last flush, as one batch of DOC_SCHEMA."""
        columns = self._columns
        arrays = [
            pa.array(columns[name], type=DOC_SCHEMA.field(name).type) if name != "category"
            else category_array(columns[name])
            for name in DOC_SCHEMA.names
        ]
        self._columns = {n: [] for n in DOC_SCHEMA.names}
        return pa.RecordBatch.from_arrays(arrays, schema=DOC_SCHEMA)
