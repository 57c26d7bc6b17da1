"""Shared fixtures: one in-process Ray for the session, and helpers to run stages and the CLI."""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import importlib.util
import io
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
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


@pytest.fixture
def no_ray_in_this_process() -> None:
    """Stop this process's Ray, if one runs, before a test starts `ray start` nodes, so that no other Ray of
    this process runs beside them. A later in-process stage starts it again."""
    import ray

    ray.shutdown()


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name`` made by ``build(folder)`` once per test run, however many pytest-xdist workers ask
    for it: the first builds under a lock while the others wait, then all read the same folder. Read-only
    to its users: a test that changes it works on a copy."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's base folder, which every worker's own folder sits in
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            build(folder)
            done.touch()
    return folder


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


def run_in_process(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a command line as ``cli`` does (``"-m", "kiln" or "stages.<name>", args...``), but in this process:
    the same argument parsing, stages, messages and exit code, on the Ray this process already runs (the
    caller requests ``ray_local``), without the Ray start (several seconds) that a new process pays. The
    command-line tests proper use ``cli``."""
    assert args[0] == "-m", args
    main = importlib.import_module("kiln.cli" if args[1] == "kiln" else f"{args[1]}.__main__").main
    out, err = io.StringIO(), io.StringIO()
    kiln_log = logging.getLogger("kiln")  # the command sets up its handlers; put back the ones it replaced
    handlers, propagate = list(kiln_log.handlers), kiln_log.propagate
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            returncode = main(list(args[2:]))
    finally:
        for handler in set(kiln_log.handlers) - set(handlers):
            kiln_log.removeHandler(handler)
            handler.close()
        for handler in handlers:
            kiln_log.addHandler(handler)
        kiln_log.propagate = propagate
    if check and returncode != 0:
        raise AssertionError(f"{args} exited {returncode}:\n{out.getvalue()}\n{err.getvalue()}")
    return subprocess.CompletedProcess(list(args), returncode, out.getvalue(), err.getvalue())


@pytest.fixture
def in_process(ray_local) -> Callable[..., subprocess.CompletedProcess]:
    """``run_in_process`` on the session's Ray."""
    return run_in_process


def tool(name: str, package: str) -> str:
    """The command-line tool ``name``: the test environment's own (requirements/dev.lock installs it beside
    this Python), else one on PATH; skips, naming the package that provides it, where there is none."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.is_file() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (make venv installs {package} from requirements/dev.lock)")
    return found


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
