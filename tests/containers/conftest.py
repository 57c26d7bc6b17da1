"""Fixtures of the container suite: a Docker engine (skip, saying why, without one), a base image
(the public python:3.11-slim-bookworm, or a debootstrap stand-in where no registry answers), and
the images `make images` builds from it."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from common.pipeline import STAGE_ORDER
from tests.conftest import REPO

PUBLIC_BASE = "python:3.11-slim-bookworm"
LOCAL_BASE = "local/python:3.11-bookworm"


def run(*command: str, timeout: float = 1800, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    """Run a command from the repository root; on failure the error shows its output's tail."""
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(command)} exited {result.returncode}:\n"
                             f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


@pytest.fixture(scope="session")
def docker() -> str:
    """The docker client to use: the one that can build with BuildKit (Debian's, where it exists)."""
    client = os.environ.get("DOCKER") or ("/usr/bin/docker" if Path("/usr/bin/docker").exists() else "docker")
    if shutil.which(client) is None:
        pytest.skip(f"no docker client ({client})")
    info = subprocess.run([client, "info"], capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        pytest.skip(f"`{client} info` fails, no Docker engine runs here: {info.stderr.strip()[:200]}")
    return client


@pytest.fixture(scope="session")
def base_image(docker: str) -> str:
    """KILN_BASE_IMAGE, else the public base if it can be pulled, else the local debootstrap one."""
    if chosen := os.environ.get("KILN_BASE_IMAGE"):
        return chosen
    if run(docker, "image", "inspect", PUBLIC_BASE, check=False).returncode == 0:
        return PUBLIC_BASE
    if run(docker, "pull", PUBLIC_BASE, check=False, timeout=300).returncode == 0:
        return PUBLIC_BASE
    if shutil.which("debootstrap") is None:
        pytest.skip(f"{PUBLIC_BASE} cannot be pulled and debootstrap is missing to build {LOCAL_BASE}")
    run("stages/base/local-base.sh", docker)
    return LOCAL_BASE


@pytest.fixture(scope="session")
def images(docker: str, base_image: str) -> dict[str, str]:
    """Every stage image, built by `make images` on ``base_image``: stage -> image reference."""
    run("make", "images", f"DOCKER={docker}", f"BASE_IMAGE={base_image}", "IMAGE_PREFIX=kiln")
    return {stage: f"kiln/{stage}:latest" for stage in (*STAGE_ORDER, "train-cpu")}


@functools.cache
def compose_cli() -> tuple[str, ...]:
    """Compose v2 (`docker compose`) where the Docker CLI has it, else v1 (`docker-compose`); skips without either."""
    for command in (("docker", "compose"), ("docker-compose",)):
        if shutil.which(command[0]) and subprocess.run([*command, "version"], capture_output=True).returncode == 0:
            return command
    pytest.skip("neither `docker compose` (v2) nor `docker-compose` (v1) is installed")
