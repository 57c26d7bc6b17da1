"""The shared runner of map-style stages: plan work units, run them on Ray, resume, account, record.

A stage supplies a ``plan`` function (deterministic work units plus a description of its
input for the fingerprint) and a ``process`` function that turns one unit into kept rows and
dropped rows through a :class:`UnitContext`. Everything else — atomic shards, done markers,
resume, the accounting check, the manifest and stats — happens here, once.

This module runs a stage (``run_stage``) and is the stage contract: stages import what they need
from it alone. The parts live apart: the unit types and context in common/units.py, the resume
rules in common/resume.py, Ray tasks in common/tasks.py, the stats in common/stage_stats.py.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

from common.config import KilnConfig
from common.config_loader import fingerprint
from common.errors import KilnError
from common.faults import fault_point
from common.files import atomic_write_json, disk_full_error, is_disk_full
from common.lock import data_dir_lock
from common.manifest import (
    MANIFEST_NAME,
    STATS_NAME,
    Accounting,
    Manifest,
    check_input_manifest,
    code_version,
    manifest_sha256,
    read_manifest,
    require_manifest,
    write_manifest,
)
from common.ray_cluster import ensure_ray, stage_resource
from common.resume import (
    FAILED_NAME,
    STATE_NAME,
    forget_failure,
    load_done,
    prepare_stage_dir,
    record_failure,
    remove_temporaries,
)
from common.shards import ShardInfo
from common.stage_stats import build_stats, merged_details
from common.tasks import TaskRunner, run_tasks
from common.units import WORK_DIR, MapStage, Plan, UnitContext, UnitResult, WorkUnit, merge_stats

__all__ = [
    "FAILED_NAME",
    "STATE_NAME",
    "WORK_DIR",
    "MapStage",
    "Plan",
    "TaskRunner",
    "UnitContext",
    "UnitResult",
    "WorkUnit",
    "input_schema_with",
    "merge_stats",
    "run_stage",
    "run_tasks",
    "shard_plan",
]


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


def _run_unit(stage: MapStage, cfg: KilnConfig, stage_dir: str, input_dir: str | None, unit: WorkUnit) -> UnitResult:
    start = time.perf_counter()
    ctx = UnitContext(stage, cfg, Path(stage_dir), Path(input_dir) if input_dir else None, unit)
    try:
        stage.process(unit, ctx)
    except BaseException:
        ctx.abort()
        raise
    return ctx.commit(time.perf_counter() - start)


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


def run_stage(stage: MapStage, cfg: KilnConfig, data_dir: Path, force: bool, log: logging.Logger) -> Manifest:
    """Run (or resume) ``stage`` under ``data_dir`` and return its manifest; refused while another run holds
    ``data_dir`` (common/lock.py)."""
    stage_dir = data_dir / stage.name
    with data_dir_lock(data_dir, log):
        forget_failure(stage_dir)
        try:
            return _run_stage(stage, cfg, data_dir, force, log)
        except OSError as err:
            if not is_disk_full(err):
                raise
            remove_temporaries(stage_dir)
            error = disk_full_error(stage.name, stage_dir, _input_bytes(data_dir, stage),
                                    then="rerun: the finished work units are kept")
            record_failure(stage_dir, error)
            raise error from None
        except KilnError as err:
            record_failure(stage_dir, err)
            raise


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

    existing = prepare_stage_dir(stage_dir, input_dir, fp, len(plan.units), force, log)
    if existing is not None:
        log.info("%s is already done with this configuration (%s); --force reruns it", stage.name, stage_dir)
        return existing

    # A result's stats stay in its done marker until they are merged (merged_details): units grow with the corpus.
    done = {u.index: replace(r, stats={}) for u in plan.units if (r := load_done(stage_dir, u)) is not None}
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
            done[result.index] = replace(result, stats={})

    remove_temporaries(stage_dir)  # what workers killed mid-unit left (their units were rerun)
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
    details = merged_details(stage_dir, plan.units)
    if stage.finalize is not None:
        outputs |= stage.finalize(cfg, stage_dir, results, details, log)
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
    stats = build_stats(stage.name, cfg, results, details, run=len(pending), total=total, started=started, wall=wall,
                        prepare_seconds=prepare_seconds)
    fault_point(f"{stage.name}.manifest")
    atomic_write_json(stage_dir / STATS_NAME, stats)
    write_manifest(stage_dir, manifest)
    log.info(
        "%s done in %.1f s: %d in, %d out, dropped %s -> %s",
        stage.name, wall, total.docs_in, total.docs_out, total.dropped or "nothing", stage_dir / MANIFEST_NAME,
    )
    return manifest
