"""What can be checked without a Docker engine: Dockerfile lint, compose and workflow schemas."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from common.pipeline import STAGE_ORDER
from tests.conftest import REPO
from tests.containers.conftest import compose_cli

BIN = Path(sys.executable).parent
DOCKERFILES = sorted([*REPO.glob("stages/*/Dockerfile"), REPO / "Dockerfile.ascend"])
STAGES = STAGE_ORDER


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: str(p.relative_to(REPO)))
def test_hadolint_finds_no_warning(dockerfile: Path):
    result = _run(str(BIN / "hadolint"), "--failure-threshold", "warning", str(dockerfile))
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_stage_has_an_image_running_as_uid_1000_with_its_own_entrypoint():
    for stage in STAGES:
        text = (REPO / "stages" / stage / "Dockerfile").read_text()
        assert re.search(r"^USER 1000:1000$", text, re.M), stage
        assert f'ENTRYPOINT ["python", "-m", "stages.{stage}"]' in text, stage
        assert "ARG KILN_BASE=" in text, stage
    for path in ("stages/base/Dockerfile", "stages/train/Dockerfile"):
        assert "ARG BASE_IMAGE=python:3.11-slim-bookworm" in (REPO / path).read_text(), path
    assert "ARG CANN_IMAGE=ascendai/cann:" in (REPO / "Dockerfile.ascend").read_text()


def test_dependencies_come_before_the_source_in_every_image():
    for dockerfile in DOCKERFILES:
        lines = dockerfile.read_text().splitlines()
        lines = lines[max(i for i, line in enumerate(lines) if line.startswith("FROM ")):]  # the image's own stage
        kiln_wheel = [i for i, line in enumerate(lines) if re.search(r"pip install .*/kiln-\S*\.whl", line)]
        installs = [i for i, line in enumerate(lines)  # pip here, or a builder stage's venv copied in
                    if ("pip install" in line and i not in kiln_wheel) or re.match(r"COPY --from=\S+ /opt/venv", line)]
        sources = kiln_wheel + [i for i, line in enumerate(lines) if re.match(r"COPY (common|stages/\w+ |stages )", line)]
        assert installs or "FROM ${KILN_BASE}" in lines, dockerfile  # ingest and mix need only the base
        if installs and sources:  # the base image holds dependencies only
            assert max(installs) < min(sources), dockerfile


def test_the_build_context_leaves_out_venvs_data_and_git():
    ignored = (REPO / ".dockerignore").read_text().split()
    for entry in (".git", ".venv", ".venv-*", "/data"):
        assert entry in ignored


def test_compose_file_matches_the_compose_spec():
    result = _run(str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.compose-spec", "docker-compose.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_docker_compose_accepts_the_file_and_chains_every_stage():
    result = _run(*compose_cli(), "config")
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    chain = ["init", "demo", *STAGES, "train-cpu"]
    for before, after in zip(chain, chain[1:], strict=False):
        assert services[after]["depends_on"] == {before: {"condition": "service_completed_successfully"}}, after
    for name in chain[2:]:
        assert services[name]["network_mode"] == "none", name
        assert services[name]["user"] == "1000:1000", name
    ray = yaml.safe_load(_run(*compose_cli(), "--profile", "ray", "config").stdout)["services"]
    for name in ("ray-head", "clean-worker", "clean-submit"):
        assert ray[name]["environment"]["RAY_AUTH_MODE"] == "disabled", name
        assert ray[name]["shm_size"], name
        assert services[name]["profiles"] == ["ray"], name


def test_workflows_match_the_github_workflow_schema():
    workflows = sorted(str(p) for p in (REPO / ".github" / "workflows").glob("*.yml"))
    assert workflows
    result = _run(str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *workflows)
    assert result.returncode == 0, result.stdout + result.stderr
