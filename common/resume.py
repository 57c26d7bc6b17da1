"""The resume rules over a stage folder: the fingerprint that lets a rerun go on (or refuses it), --force,
the done markers of finished units, leftover temporaries, and the error a failed run leaves for `kiln status`."""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
from datetime import UTC, datetime
from pathlib import Path

from common.errors import ResumeRefused
from common.files import atomic_write_json
from common.log import LOG_DIR
from common.manifest import MANIFEST_NAME, Manifest, check_input_manifest, from_data, read_manifest
from common.units import WORK_DIR, UnitResult, WorkUnit, marker_path

STATE_NAME = "_state.json"
# Written when a stage stops with an error (the message, for `kiln status`); removed when it finishes.
FAILED_NAME = "_failed.json"


def load_done(stage_dir: Path, unit: WorkUnit) -> UnitResult | None:
    """The unit's done marker, if it exists and its outputs are still on disk with their sizes."""
    path = marker_path(stage_dir, unit.index)
    if not path.exists():
        return None
    result = from_data(UnitResult, json.loads(path.read_bytes()))
    outputs = [result.shard, *result.excluded.values(), *result.outputs.values()]
    if result.spec != unit.spec or any(
        not (stage_dir / s.path).exists() or (stage_dir / s.path).stat().st_size != s.bytes for s in outputs
    ):
        return None
    return result


def remove_temporaries(stage_dir: Path) -> None:
    """Remove the temporary files (``.<name>.tmp-<pid>``) that writers stopped mid-write left under ``stage_dir``."""
    for tmp in stage_dir.rglob(".*.tmp-*"):
        tmp.unlink(missing_ok=True)


def prepare_stage_dir(stage_dir: Path, input_dir: Path | None, fp: str, units: int, force: bool,
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
    remove_temporaries(stage_dir)
    if not state_path.exists():
        atomic_write_json(state_path, {"fingerprint": fp, "units": units})
    return None


def forget_failure(stage_dir: Path) -> None:
    """Before a rerun: drop the recorded error, and the work folder of a stage that failed before any work
    unit finished (nothing is lost, and a corrected configuration can start it without --force)."""
    failed = stage_dir / FAILED_NAME
    if not failed.exists():
        return
    work = stage_dir / WORK_DIR
    if work.is_dir() and not any(work.glob("unit-*.json")):
        shutil.rmtree(work)
    failed.unlink()


def record_failure(stage_dir: Path, error: Exception) -> None:
    """Keep the error that stopped a stage where `kiln status` finds it (best effort: the disk may be full),
    unless its previous output is still complete (a refused --force leaves it untouched)."""
    if (stage_dir / MANIFEST_NAME).exists():
        return
    with contextlib.suppress(OSError):
        stage_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(stage_dir / FAILED_NAME, {"error": str(error), "at": datetime.now(UTC).isoformat()})
