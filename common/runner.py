"""The shared runner of map-style stages: plan work units, run them on Ray, resume, account, record.

A stage supplies a ``plan`` function (deterministic work units plus a description of its
input for the fingerprint) and a ``process`` function that turns one unit into kept rows and
dropped rows through a :class:`UnitContext`. Everything else — atomic shards, done markers,
resume, the accounting check, the manifest and stats — happens here, once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import platform
import resource
import shutil
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

from common.config import KilnConfig, fingerprint
from common.errors import AccountingError, KilnError, ResumeRefused
from common.faults import fault_point
from common.files import atomic_write_json, disk_full_error, is_disk_full
from common.lock import data_dir_lock
from common.log import LOG_DIR, progress
from common.manifest import (
    MANIFEST_NAME,
    STATS_NAME,
    Accounting,
    Manifest,
    check_input_manifest,
    code_version,
    from_data,
    manifest_sha256,
    read_manifest,
    require_manifest,
    to_data,
    write_manifest,
)
from common.pipeline import input_stage_of
from common.ray_cluster import ensure_ray, ray_description, stage_resource, unschedulable
from common.schema import EXCLUDED_SCHEMA
from common.shards import ShardInfo, ShardWriter

WORK_DIR = "_work"
EXCLUDED_DIR = "_excluded"
STATE_NAME = "_state.json"
# Written when a stage stops with an error (the message, for `kiln status`); removed when it finishes.
FAILED_NAME = "_failed.json"
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
        atomic_write_json(_marker_path(self.stage_dir, self.unit.index), to_data(result), indent=1)
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
    finalize: Callable[[KilnConfig, Path, list[UnitResult], logging.Logger], dict[str, list[ShardInfo]]] | None = None

    @property
    def input_stage(self) -> str | None:
        """The stage whose output this one reads, from the pipeline order."""
        return input_stage_of(self.name)


def shard_plan(cfg: KilnConfig, input_dir: Path | None) -> Plan:
    """One unit per shard of the input stage (its manifest, never a glob): the usual map plan."""
    assert input_dir is not None
    manifest = require_manifest(input_dir)
    units = [WorkUnit(index=i, spec={"shard": info.to_dict()}) for i, info in enumerate(manifest.shards)]
    return Plan(units=units, input={"stage": manifest.stage, "manifest_sha256": manifest_sha256(input_dir)})


def input_schema_with(*fields: pa.Field) -> Callable[[UnitContext], pa.Schema]:
    """An ``output_schema`` for map stages that add columns to their input shard's schema."""

    def schema(ctx: UnitContext) -> pa.Schema:
        info = ShardInfo(**ctx.unit.spec["shard"])
        with pa.memory_map(str(ctx.input_dir / info.path)) as source:
            result = pa.ipc.open_file(source).schema
        for field in fields:
            result = result.append(field)
        return result

    return schema


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


def _marker_path(stage_dir: Path, index: int) -> Path:
    return stage_dir / WORK_DIR / f"unit-{index:05d}.json"


def _run_unit(stage: MapStage, cfg: KilnConfig, stage_dir: str, input_dir: str | None, unit: WorkUnit) -> UnitResult:
    start = time.perf_counter()
    ctx = UnitContext(stage, cfg, Path(stage_dir), Path(input_dir) if input_dir else None, unit)
    try:
        stage.process(unit, ctx)
    except BaseException:
        ctx.abort()
        raise
    return ctx.commit(time.perf_counter() - start)


def _load_done(stage_dir: Path, unit: WorkUnit) -> UnitResult | None:
    """The unit's done marker, if it exists and its outputs are still on disk with their sizes."""
    path = _marker_path(stage_dir, unit.index)
    if not path.exists():
        return None
    result = from_data(UnitResult, json.loads(path.read_bytes()))
    outputs = [result.shard, *result.excluded.values(), *result.outputs.values()]
    if result.spec != unit.spec or any(
        not (stage_dir / s.path).exists() or (stage_dir / s.path).stat().st_size != s.bytes for s in outputs
    ):
        return None
    return result


def _remove_temporaries(stage_dir: Path) -> None:
    for tmp in stage_dir.rglob(".*.tmp-*"):
        tmp.unlink(missing_ok=True)


def _prepare_stage_dir(stage_dir: Path, input_dir: Path | None, fp: str, units: int, force: bool,
                       log: logging.Logger) -> Manifest | None:
    """Apply the resume rules; return the existing manifest when the stage is already done. ``force``
    removes the previous output, once every input file has matched its sha256 (a corrupt input never
    costs a good output)."""
    previous = [child for child in stage_dir.iterdir() if child.name != LOG_DIR] if stage_dir.is_dir() else []
    if force and previous:
        if input_dir is not None:
            check_input_manifest(input_dir, every_checksum=True)
        log.info("--force: removing the previous output in %s", stage_dir)
        for child in previous:
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    state_path = stage_dir / WORK_DIR / STATE_NAME
    manifest = read_manifest(stage_dir)
    recorded = manifest.fingerprint if manifest else None
    if recorded is None and state_path.exists():
        recorded = json.loads(state_path.read_text())["fingerprint"]
    if recorded is not None and recorded != fp:
        raise ResumeRefused(
            f"{stage_dir} holds work made with a different configuration or input "
            f"(fingerprint {recorded[:12]}…, now {fp[:12]}…). Rerun with --force to start over."
        )
    if manifest is not None:
        return manifest
    (stage_dir / WORK_DIR).mkdir(parents=True, exist_ok=True)
    _remove_temporaries(stage_dir)
    if not state_path.exists():
        atomic_write_json(state_path, {"fingerprint": fp, "units": units})
    return None


TaskRunner = Callable[..., list]
"""``run_tasks``'s shape: (fn, calls, cfg, desc, log, point) -> the results, for steps that accept another runner."""


def _cancel(refs: list) -> None:
    """Cancel the tasks of ``refs`` and wait until they have ended (so none still writes), fetching each
    outcome so that Ray does not report their errors as unhandled."""
    import ray

    for ref in refs:
        ray.cancel(ref, force=True)
    ended, _ = ray.wait(refs, num_returns=len(refs), timeout=60) if refs else ([], [])
    for ref in ended:
        with contextlib.suppress(ray.exceptions.RayError):
            ray.get(ref)


SCHEDULING_CHECK_S = 2.0
"""How often ``run_tasks`` looks whether the cluster could run its waiting tasks at all."""


class _SchedulingWatch:
    """Tells when tasks of ``shape`` have had no node of the cluster that could ever run them for ``timeout_s``."""

    def __init__(self, shape: dict[str, float], timeout_s: float, desc: str):
        self.shape, self.timeout_s, self.desc = shape, timeout_s, desc
        self.since: float | None = None

    def problem(self) -> str | None:
        """None while some node could run the tasks (or for less than ``timeout_s`` none could), else why not."""
        missing = unschedulable(self.shape)
        if missing is None:
            self.since = None
            return None
        self.since = self.since or time.monotonic()
        if time.monotonic() - self.since < self.timeout_s:
            return None
        custom = [name for name in missing if name != "CPU"]
        if custom:
            how = (f"declare it on the nodes meant for {self.desc} (`ray start --resources='{{\"{custom[0]}\": "
                   f"<CPUs>}}'`, a KubeRay worker group's `resources: {{{custom[0]}: \"<CPUs>\"}}`), or set "
                   f"ray.scale_on_demand=false so that {self.desc} runs on any node")
        elif missing:
            how = "add a node with CPUs (`ray start --address=<head> --num-cpus=<n>`)"
        else:
            how = "add a node that declares all of them"
        return (f"{self.desc}: no node of the Ray cluster could run its tasks, which each ask for {self.shape}, for "
                f"{self.timeout_s:g} s (ray.unschedulable_timeout_s): no live node declares "
                f"{' or '.join(map(repr, missing)) or 'all of them at once'}; {how}")


def run_tasks(fn: Callable, calls: list[tuple], cfg: KilnConfig, desc: str, log: logging.Logger, point: str,
              on_result: Callable[[object], str | None] | None = None, resource: str | None = None) -> list:
    """Run ``fn(*args)`` for every args tuple in ``calls`` as Ray tasks (one CPU each), with a
    progress bar; results come back in completion order. A failure cancels the rest and is
    raised as a KilnError naming the call; a task whose worker died is rerun up to
    ``ray.task_retries`` times. ``on_result`` may return a progress note. Each
    result passes the fault point ``<point>.done`` (see common/faults.py). With ``resource``
    each task also asks for one unit of that custom Ray resource. Tasks that no node of the cluster
    could run for ``ray.unschedulable_timeout_s`` fail the call with a KilnError saying what is missing."""
    import ray

    ensure_ray(cfg.ray)
    remote = ray.remote(num_cpus=1, max_retries=cfg.ray.task_retries,
                        resources={resource: 1} if resource else None)(fn)
    refs = {remote.remote(*args): args for args in calls}
    watch = _SchedulingWatch({"CPU": 1, **({resource: 1} if resource else {})}, cfg.ray.unschedulable_timeout_s,
                             desc)
    results = []
    with progress(len(refs), desc, unit="task") as bar:
        waiting = list(refs)
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1, timeout=SCHEDULING_CHECK_S)
            if not done:
                if problem := watch.problem():
                    _cancel(waiting)
                    raise KilnError(problem)
                continue
            try:
                result = ray.get(done[0])
            except ray.exceptions.RayTaskError as err:
                _cancel(waiting)
                cause = err.cause if isinstance(err.cause, Exception) else err
                if isinstance(cause, KilnError) or is_disk_full(cause):
                    raise cause from None
                log.debug("task failed", exc_info=err)
                raise KilnError(f"{desc}: task {refs[done[0]][-1]} failed: {cause!r}") from None
            except ray.exceptions.RayError as err:  # its worker or node died on every try
                _cancel(waiting)
                raise KilnError(f"{desc}: task {refs[done[0]][-1]} was lost {cfg.ray.task_retries + 1} times "
                                f"(ray.task_retries={cfg.ray.task_retries}): {type(err).__name__}: "
                                f"{str(err).splitlines()[0] if str(err) else ''}; finished units are kept, "
                                "rerun to go on") from None
            results.append(result)
            fault_point(f"{point}.done")
            note = on_result(result) if on_result else None
            if note:
                bar.set_postfix_str(note)
            bar.update(1)
    return results


def _execute(stage: MapStage, cfg: KilnConfig, stage_dir: Path, input_dir: Path | None,
             pending: list[WorkUnit], log: logging.Logger) -> list[UnitResult]:
    import ray

    ensure_ray(cfg.ray)
    cfg_ref = ray.put(cfg)
    docs = 0

    def note(result: UnitResult) -> str:
        nonlocal docs
        for message in result.warnings:
            log.warning("%s", message)
        docs += result.accounting.docs_in
        return f"docs={docs:,}"

    calls = [(stage, cfg_ref, str(stage_dir), str(input_dir) if input_dir else None, unit) for unit in pending]
    return run_tasks(_run_unit, calls, cfg, stage.name, log, f"{stage.name}.unit", on_result=note,
                     resource=stage_resource(cfg.ray, stage.name))


def _merged_details(results: list[UnitResult]) -> dict:
    merged: dict = {}
    for result in results:
        merge_stats(merged, result.stats, STATS_LIST_CAP)
    return merged


def _host_facts(cfg: KilnConfig) -> dict:
    return {
        "hostname": socket.gethostname(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "ray": ray_description(cfg.ray),
    }


def run_stage(stage: MapStage, cfg: KilnConfig, data_dir: Path, force: bool, log: logging.Logger) -> Manifest:
    """Run (or resume) ``stage`` under ``data_dir`` and return its manifest; refused while another run holds
    ``data_dir`` (common/lock.py)."""
    stage_dir = data_dir / stage.name
    with data_dir_lock(data_dir, log):
        _forget_failure(stage_dir)
        try:
            return _run_stage(stage, cfg, data_dir, force, log)
        except OSError as err:
            if not is_disk_full(err):
                raise
            _remove_temporaries(stage_dir)
            error = disk_full_error(stage.name, stage_dir, _input_bytes(data_dir, stage),
                                    then="rerun: the finished work units are kept")
            _record_failure(stage_dir, error)
            raise error from None
        except KilnError as err:
            _record_failure(stage_dir, err)
            raise


def _forget_failure(stage_dir: Path) -> None:
    """Before a rerun: drop the recorded error, and the work folder of a stage that failed before any work
    unit finished (nothing is lost, and a corrected configuration can start it without --force)."""
    failed = stage_dir / FAILED_NAME
    if not failed.exists():
        return
    work = stage_dir / WORK_DIR
    if work.is_dir() and not any(work.glob("unit-*.json")):
        shutil.rmtree(work)
    failed.unlink()


def _record_failure(stage_dir: Path, error: Exception) -> None:
    """Keep the error that stopped a stage where `kiln status` finds it (best effort: the disk may be full),
    unless its previous output is still complete (a refused --force leaves it untouched)."""
    if (stage_dir / MANIFEST_NAME).exists():
        return
    with contextlib.suppress(OSError):
        stage_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(stage_dir / FAILED_NAME, {"error": str(error), "at": datetime.now(UTC).isoformat()})


def _input_bytes(data_dir: Path, stage: MapStage) -> int | None:
    """The size of a stage's input shards: roughly what its output needs (less when it drops documents)."""
    if stage.input_stage is None:
        return None
    manifest = read_manifest(data_dir / stage.input_stage)
    return sum(info.bytes for info in manifest.shards) if manifest else None


def _require_documents(stage: str, input_dir: Path) -> None:
    """Refuse to run on an input manifest that is not whole (``check_input_manifest``), or on an input stage
    that kept no document: nothing downstream could be useful."""
    accounting = check_input_manifest(input_dir).accounting
    if accounting.docs_out == 0:
        dropped = ", ".join(f"{reason} {n:,}" for reason, n in sorted(accounting.dropped.items(), key=lambda kv: -kv[1]))
        raise KilnError(f"{stage}: {input_dir.name} kept none of its {accounting.docs_in:,} documents"
                        f"{f' (dropped: {dropped})' if dropped else ''}; nothing to {stage}. See `kiln status "
                        f"{input_dir.parent}` and the drop reasons under {input_dir / '_excluded'}")


def _run_stage(stage: MapStage, cfg: KilnConfig, data_dir: Path, force: bool, log: logging.Logger) -> Manifest:
    started = datetime.now(UTC)
    wall_start = time.perf_counter()
    stage_dir = data_dir / stage.name
    input_dir = data_dir / stage.input_stage if stage.input_stage else None
    if input_dir is not None:
        _require_documents(stage.name, input_dir)
    plan = stage.plan(cfg, input_dir)
    stage_config = cfg.section(stage.name).model_dump(mode="json")
    fp = fingerprint({"stage": stage.name, "config": stage_config, "input": plan.input})

    existing = _prepare_stage_dir(stage_dir, input_dir, fp, len(plan.units), force, log)
    if existing is not None:
        log.info("%s is already done with this configuration (%s); --force reruns it", stage.name, stage_dir)
        return existing

    done = {u.index: r for u in plan.units if (r := _load_done(stage_dir, u)) is not None}
    pending = [u for u in plan.units if u.index not in done]
    if done:
        log.info("resuming %s: %d of %d units already done", stage.name, len(done), len(plan.units))
    log.info("%s: %d work units to run -> %s", stage.name, len(pending), stage_dir)
    prepare_seconds = 0.0
    if pending and stage.prepare is not None:
        prepare_start = time.perf_counter()
        stage.prepare(cfg, input_dir, stage_dir, log)
        prepare_seconds = time.perf_counter() - prepare_start
    if pending:
        for result in _execute(stage, cfg, stage_dir, input_dir, pending, log):
            done[result.index] = result

    _remove_temporaries(stage_dir)  # what workers killed mid-unit left (their units were rerun)
    results = [done[u.index] for u in plan.units]
    total = Accounting()
    excluded: dict[str, list[ShardInfo]] = {}
    outputs: dict[str, list[ShardInfo]] = {}
    for result in results:
        total.add(result.accounting)
        for reason, info in result.excluded.items():
            excluded.setdefault(reason, []).append(info)
        for name, info in result.outputs.items():
            outputs.setdefault(name, []).append(info)
    if stage.finalize is not None:
        outputs |= stage.finalize(cfg, stage_dir, results, log)
    manifest = Manifest(
        stage=stage.name,
        code_version=code_version(*stage.packages, f"stages/{stage.name}"),
        fingerprint=fp,
        config=stage_config,
        input=plan.input,
        shards=[r.shard for r in results],
        excluded=excluded,
        accounting=total,
        outputs=outputs,
    )
    wall = time.perf_counter() - wall_start
    stats = {
        "stage": stage.name,
        "accounting": total.to_dict(),
        "bytes_out": sum(r.shard.bytes for r in results),
        "wall_seconds": round(wall, 3),
        "started_at": started.isoformat(timespec="seconds"),
        "units": {"total": len(results), "run": len(pending), "resumed": len(results) - len(pending)},
        "unit_seconds": round(sum(r.seconds for r in results), 3),
        "prepare_seconds": round(prepare_seconds, 3),
        "peak_rss_mb_per_worker": round(max((r.peak_rss_mb for r in results), default=0.0), 1),
        "host": _host_facts(cfg),
        "per_unit": [asdict(r.accounting) | {"index": r.index, "seconds": r.seconds, "peak_rss_mb": r.peak_rss_mb}
                     for r in results],
        "details": _merged_details(results),
    }
    fault_point(f"{stage.name}.manifest")
    atomic_write_json(stage_dir / STATS_NAME, stats)
    write_manifest(stage_dir, manifest)
    log.info(
        "%s done in %.1f s: %d in, %d out, dropped %s -> %s",
        stage.name, wall, total.docs_in, total.docs_out, total.dropped or "nothing", stage_dir / MANIFEST_NAME,
    )
    return manifest
