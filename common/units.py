"""The work-unit contract of a map stage: :class:`MapStage`, its :class:`WorkUnit` and :class:`Plan`,
the :class:`UnitContext` a unit writes its kept and dropped rows through (with the accounting check),
and the done marker each finished unit leaves under ``<stage_dir>/_work/``."""

from __future__ import annotations

import logging
import resource
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from common.config import KilnConfig
from common.errors import AccountingError
from common.files import atomic_write_json
from common.manifest import Accounting, to_data
from common.pipeline import input_stage_of
from common.schema import EXCLUDED_SCHEMA
from common.shards import ShardInfo, ShardWriter

WORK_DIR = "_work"
EXCLUDED_DIR = "_excluded"
DROP_BUFFER_ROWS = 1024
STATS_LIST_CAP = 20


@dataclass(frozen=True)
class WorkUnit:
    """One deterministic piece of work; output shard ``index`` depends only on it."""

    index: int
    spec: dict

    @property
    def shard_name(self) -> str:
        return f"part-{self.index:05d}.arrow"


@dataclass(frozen=True)
class Plan:
    """The units of a run and a JSON description of its input (part of the fingerprint)."""

    units: list[WorkUnit]
    input: dict


@dataclass
class UnitResult:
    """What a finished unit recorded in its done marker (written and read by to_data / from_data)."""

    index: int
    spec: dict
    accounting: Accounting
    shard: ShardInfo
    excluded: dict[str, ShardInfo]
    outputs: dict[str, ShardInfo]
    seconds: float
    peak_rss_mb: float
    warnings: list[str]
    stats: dict


Signal = str | Sequence[str | None] | pa.Array | pa.ChunkedArray | None


def excluded_table(reason: str, rows: pa.Table | pa.RecordBatch, signal: Signal) -> pa.Table:
    """The EXCLUDED_SCHEMA table of dropped document ``rows``: their ids, source and text (and
    ``location`` when they have one), ``reason``, and ``signal`` (one string for all, one per row, or none)."""
    n = rows.num_rows
    columns = {}
    for name in EXCLUDED_SCHEMA.names:
        if name == "reason":
            columns[name] = pa.array([reason] * n, pa.string())
        elif name == "signal":
            columns[name] = _signal_array(signal, n)
        elif name in rows.column_names:
            columns[name] = rows.column(name)
        else:
            columns[name] = pa.nulls(n, EXCLUDED_SCHEMA.field(name).type)
    return pa.table(columns).cast(EXCLUDED_SCHEMA)


def _signal_array(signal: Signal, n: int) -> pa.Array | pa.ChunkedArray:
    if signal is None:
        return pa.nulls(n, pa.string())
    if isinstance(signal, str):
        return pa.array([signal] * n, pa.string())
    if isinstance(signal, pa.Array | pa.ChunkedArray):
        return signal.cast(pa.string())
    return pa.array(signal, pa.string())


class UnitContext:
    """Where a unit's process function sends its rows; runs inside a Ray worker."""

    def __init__(self, stage: MapStage, cfg: KilnConfig, stage_dir: Path, input_dir: Path | None, unit: WorkUnit):
        self.stage = stage
        self.cfg = cfg
        self.stage_dir = stage_dir
        self.input_dir = input_dir
        self.unit = unit
        self.accounting = Accounting()
        self.warnings: list[str] = []
        self.stats: dict = {}
        self._open_writers()

    def _open_writers(self) -> None:
        schema = self.stage.output_schema
        if callable(schema):
            schema = schema(self)
        self._kept = ShardWriter(self.stage_dir / self.unit.shard_name, schema, self.stage_dir)
        self._excluded: dict[str, ShardWriter] = {}
        self._outputs: dict[str, ShardWriter] = {}
        self._pending_drops: dict[str, list[dict]] = {}

    def count_in(self, n: int = 1) -> None:
        """Count ``n`` documents (or raw records) read from the input."""
        self.accounting.docs_in += n

    def keep(self, batch: pa.RecordBatch | pa.Table, output: str | None = None) -> None:
        """Write kept documents to the unit's shard, or to ``<stage_dir>/<output>/`` (e.g. a
        validation split); either way they count as documents out."""
        if output is None:
            self._kept.write(batch)
        else:
            self._output_writer(output, batch.schema).write(batch)
        self.accounting.docs_out += batch.num_rows

    def record(self, output: str, rows: pa.Table) -> None:
        """Write rows that are not documents (e.g. the lines a stage removed from kept documents, for audit) to
        ``<stage_dir>/<output>/``; they count toward no document total."""
        if rows.num_rows:
            self._output_writer(output, rows.schema).write(rows)

    def _output_writer(self, output: str, schema: pa.Schema) -> ShardWriter:
        """The unit's writer of ``<stage_dir>/<output>/``, opened on first use."""
        writer = self._outputs.get(output)
        if writer is None:
            path = self.stage_dir / output / self.unit.shard_name
            writer = self._outputs[output] = ShardWriter(path, schema, self.stage_dir)
        return writer

    def drop(self, reason: str, rows: pa.Table | pa.RecordBatch | list[dict], signal: Signal = None) -> None:
        """Write dropped documents to ``_excluded/<reason>/`` and count them under ``reason``.

        ``rows`` are document rows (a table or batch; its doc_id, source_id, source, text and
        location columns are kept), or a list of dicts with (some of) those keys, which is buffered
        so that one bad line at a time stays cheap. ``signal`` says why: one string for every row,
        one string per row, or None.
        """
        if isinstance(rows, list):
            signals = [signal] * len(rows) if signal is None or isinstance(signal, str) else list(signal)
            buffer = self._pending_drops.setdefault(reason, [])
            buffer.extend(row | {"reason": reason, "signal": s} for row, s in zip(rows, signals, strict=True))
            if len(buffer) >= DROP_BUFFER_ROWS:
                self._flush_drops(reason)
        else:
            self._flush_drops(reason)
            self._write_dropped(reason, excluded_table(reason, rows, signal))
        self.accounting.dropped[reason] = self.accounting.dropped.get(reason, 0) + len(rows)

    def _flush_drops(self, reason: str) -> None:
        buffer = self._pending_drops.pop(reason, None)
        if buffer:
            self._write_dropped(reason, pa.Table.from_pylist(buffer, EXCLUDED_SCHEMA))

    def _write_dropped(self, reason: str, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        writer = self._excluded.get(reason)
        if writer is None:
            path = self.stage_dir / EXCLUDED_DIR / reason / self.unit.shard_name
            writer = self._excluded[reason] = ShardWriter(path, EXCLUDED_SCHEMA, self.stage_dir)
        writer.write(table)

    def add_stats(self, stats: dict) -> None:
        """Merge stage-specific statistics (counts add up, lists are examples) into the unit's."""
        merge_stats(self.stats, stats, STATS_LIST_CAP)

    def warn(self, message: str) -> None:
        """Record a warning; the driver logs it and keeps it in the done marker."""
        self.warnings.append(message)

    def abort(self) -> None:
        """Remove everything this unit has written so far (nothing becomes visible)."""
        self._kept.abort()
        for writer in [*self._excluded.values(), *self._outputs.values()]:
            writer.abort()

    def discard(self) -> None:
        """Throw away the unit's output and counts so far and start it afresh (e.g. to skip a bad file)."""
        self.abort()
        self.accounting = Accounting()
        self._open_writers()

    def commit(self, seconds: float) -> UnitResult:
        """Commit every output atomically, check the unit's accounting, then write its done marker."""
        for reason in list(self._pending_drops):
            self._flush_drops(reason)
        if not self.accounting.balanced:
            self.abort()
            acc = self.accounting
            raise AccountingError(
                f"{self.stage.name} unit {self.unit.index} ({self.unit.spec}): in={acc.docs_in} "
                f"!= out={acc.docs_out} + dropped={sum(acc.dropped.values())}"
            )
        result = UnitResult(
            index=self.unit.index,
            spec=self.unit.spec,
            accounting=self.accounting,
            shard=self._kept.commit(),
            excluded={reason: writer.commit() for reason, writer in sorted(self._excluded.items())},
            outputs={name: writer.commit() for name, writer in sorted(self._outputs.items())},
            seconds=round(seconds, 3),
            peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            warnings=self.warnings,
            stats=self.stats,
        )
        atomic_write_json(marker_path(self.stage_dir, self.unit.index), to_data(result), indent=1)
        return result


@dataclass(frozen=True)
class MapStage:
    """A map-style stage: ``plan`` makes the units, ``process`` turns one unit into rows."""

    name: str
    output_schema: pa.Schema | Callable[[UnitContext], pa.Schema]  # fixed, or derived from the unit's input
    plan: Callable[[KilnConfig, Path | None], Plan]
    process: Callable[[WorkUnit, UnitContext], None]
    packages: tuple[str, ...] = ("common",)
    # A global step between planning and the map units (e.g. dedup's LSH), run only when units
    # are pending: prepare(cfg, input_dir, stage_dir, log) leaves its results under
    # <stage_dir>/_work/, where ``process`` reads them; it must be resumable on its own.
    prepare: Callable[[KilnConfig, Path | None, Path, logging.Logger], None] | None = None
    # A global step after the map units and before the manifest (e.g. packing tokens): it
    # returns more named outputs (files written atomically, with their checksums) for the manifest.
    finalize: Callable[[KilnConfig, Path, list[UnitResult], dict, logging.Logger], dict[str, list[ShardInfo]]] | None = None

    @property
    def input_stage(self) -> str | None:
        """The stage whose output this one reads, from the pipeline order."""
        return input_stage_of(self.name)


def merge_stats(total: dict, part: dict, list_cap: int) -> dict:
    """Fold one unit's stats into ``total``: numbers add up, dicts merge, lists concatenate (capped)."""
    for key, value in part.items():
        if isinstance(value, dict):
            merge_stats(total.setdefault(key, {}), value, list_cap)
        elif isinstance(value, list):
            total[key] = (total.get(key, []) + value)[:list_cap]
        else:
            total[key] = total.get(key, 0) + value
    return total


def marker_path(stage_dir: Path, index: int) -> Path:
    """The done marker of unit ``index`` of the stage in ``stage_dir``."""
    return stage_dir / WORK_DIR / f"unit-{index:05d}.json"
