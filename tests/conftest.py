"""Shared fixtures: one in-process Ray for the session, and helpers to run stages and the CLI."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from common.config import KilnConfig, load_config
from common.faults import FAULT_ENV
from common.manifest import Manifest
from common.ray_cluster import ensure_ray
from common.runner import MapStage, run_stage

REPO = Path(__file__).resolve().parent.parent

# The trainer's tests run in .venv-train (`make test-train`), where MindSpore lives.
if importlib.util.find_spec("mindspore") is None:
    collect_ignore_glob = ["test_train*.py"]


@pytest.fixture(scope="session")
def ray_local():
    """A local Ray shared by every in-process stage run of the session."""
    import ray

    ensure_ray(make_config("ray.num_cpus=2").ray)
    yield
    ray.shutdown()


def make_config(*overrides: str, input: list[Path] | None = None) -> KilnConfig:
    """The default config with ``--set``-style overrides (and ingest.input)."""
    extra = [f"ingest.input={json.dumps([str(p) for p in input])}"] if input else []
    return load_config([], [*overrides, *extra])


@pytest.fixture
def run(ray_local):
    """Run a stage in-process: run(stage, data_dir, cfg, force=False) -> Manifest."""

    def _run(stage: MapStage, data_dir: Path, cfg: KilnConfig, force: bool = False) -> Manifest:
        return run_stage(stage, cfg, data_dir, force=force, log=logging.getLogger("kiln.test"))

    return _run


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a child process: this one's, with the repository importable, no Ray
    cluster address (each run starts its own private Ray) and no fault left over."""
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", FAULT_ENV)}
    return env | {"PYTHONPATH": str(REPO)} | extra


def cli(*args: str, timeout: float = 300, check: bool = True, env: dict[str, str] | None = None,
        **kwargs) -> subprocess.CompletedProcess:
    """Run ``python <args>`` from the repository root, as a user would."""
    env = env or child_env()
    result = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=timeout, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"{args} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result
