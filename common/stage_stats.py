"""The statistics of a finished stage run (its stats.json): accounting, timings, peak memory, the host and
Ray it ran on, per-unit figures, and the stage-specific details its units recorded, merged."""

from __future__ import annotations

import json
import os
import platform
import socket
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from common.config import KilnConfig
from common.manifest import Accounting
from common.ray_cluster import ray_description
from common.units import STATS_LIST_CAP, UnitResult, WorkUnit, marker_path, merge_stats


def build_stats(stage: str, cfg: KilnConfig, results: list[UnitResult], details: dict, run: int, total: Accounting,
                started: datetime, wall: float, prepare_seconds: float) -> dict:
    """The stats.json of ``stage``: ``results`` of every unit (``run`` of them run now, the rest resumed), their
    merged ``details`` (``merged_details``), ``total`` accounting, when it started, its wall time and the seconds
    its prepare step took."""
    return {
        "stage": stage,
        "accounting": total.to_dict(),
        "bytes_out": sum(r.shard.bytes for r in results),
        "wall_seconds": round(wall, 3),
        "started_at": started.isoformat(timespec="seconds"),
        "units": {"total": len(results), "run": run, "resumed": len(results) - run},
        "unit_seconds": round(sum(r.seconds for r in results), 3),
        "prepare_seconds": round(prepare_seconds, 3),
        "peak_rss_mb_per_worker": round(max((r.peak_rss_mb for r in results), default=0.0), 1),
        "host": _host_facts(cfg),
        "per_unit": [asdict(r.accounting) | {"index": r.index, "seconds": r.seconds, "peak_rss_mb": r.peak_rss_mb}
                     for r in results],
        "details": details,
    }


def merged_details(stage_dir: Path, units: list[WorkUnit]) -> dict:
    """The stage-specific stats of every unit in ``units``, merged in plan order (lists capped at STATS_LIST_CAP),
    read from one done marker at a time."""
    merged: dict = {}
    for unit in units:
        merge_stats(merged, json.loads(marker_path(stage_dir, unit.index).read_bytes())["stats"], STATS_LIST_CAP)
    return merged


def _host_facts(cfg: KilnConfig) -> dict:
    return {
        "hostname": socket.gethostname(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "ray": ray_description(cfg.ray),
    }
