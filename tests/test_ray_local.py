"""Local mode starts its own private Ray even while a `ray start --head` cluster runs on the machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kiln.ray_nodes import CURRENT_CLUSTER, RayNodes
from tests.conftest import child_env, cli

pytestmark = pytest.mark.usefixtures("no_ray_in_this_process")


@pytest.mark.slow
def test_a_stage_runs_on_a_private_ray_while_a_ray_start_cluster_runs(tmp_path: Path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "a.jsonl").write_text("".join(json.dumps({"text": f"document number {i} " * 5}) + "\n"
                                         for i in range(50)))
    with RayNodes(child_env(RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")) as nodes:
        nodes.start_head(num_cpus=1)
        assert str(nodes.port) in CURRENT_CLUSTER.read_text()
        result = cli("-m", "stages.ingest", "--input", str(raw), "--data-dir", str(tmp_path / "data"),
                     "--set", "ray.num_cpus=1")
    assert "starting a private local Ray with 1 CPUs" in result.stderr
    assert "connecting to the Ray cluster" not in result.stderr
    manifest = json.loads((tmp_path / "data" / "ingest" / "_manifest.json").read_text())
    assert manifest["accounting"]["out"] == 50
