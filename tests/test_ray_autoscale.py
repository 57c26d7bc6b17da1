"""The clean stage on an autoscaling cluster (Ray's fake multi-node provider on this machine): the clean
worker group starts at 0, grows past 1 while clean's tasks wait, returns to 0, and the output equals local
mode's byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kiln.autoscale import autoscaler_config
from tests.conftest import cli
from tests.resume_helpers import assert_same_output

pytestmark = pytest.mark.usefixtures("no_ray_in_this_process")


def test_the_autoscaler_config_declares_the_resource_on_the_clean_group_only():
    config = autoscaler_config(6390, "clean", 4, 30)
    types = config["available_node_types"]
    assert types["ray.head.default"]["resources"] == {"CPU": 0}
    assert types["clean_worker"] | {"node_config": {}} == {"resources": {"CPU": 1, "clean": 1}, "node_config": {},
                                                          "min_workers": 0, "max_workers": 4}
    assert config["idle_timeout_minutes"] == 0.5 and config["provider"]["gcs_address"] == "127.0.0.1:6390"


def test_autoscale_demo_refuses_a_run_without_ingest(tmp_path: Path):
    result = cli("-m", "kiln", "autoscale-demo", "--data-dir", str(tmp_path), check=False)
    assert result.returncode == 2 and "run the ingest stage first" in result.stderr


@pytest.mark.slow
def test_clean_scales_0_to_n_to_0_on_an_autoscaling_cluster_and_matches_local_mode(tmp_path: Path):
    run = tmp_path / "run"  # both runs use the same root: manifests record their input paths
    cli("-m", "kiln", "demo", str(run / "demo"), "--docs", "4000")
    cli("-m", "stages.ingest", "--input", str(run / "demo" / "corpus"), "--data-dir", str(run))
    # The local-mode reference, as a command: no other Ray of this machine runs while the cluster's nodes start.
    cli("-m", "stages.clean", "--data-dir", str(run))
    local = (run / "clean").rename(tmp_path / "local-clean")

    result = cli("-m", "kiln", "autoscale-demo", "--data-dir", str(run), "--max-workers", "3", timeout=600)
    samples = json.loads((run / "_autoscale" / "timeline.json").read_text())["samples"]
    assert samples[0]["workers"] == 0, "the clean group starts empty"
    assert max(s["workers"] for s in samples if s["clean_running"]) > 1, result.stdout
    assert max(s["workers"] for s in samples) <= 3
    assert samples[-1]["workers"] == 0 and not samples[-1]["clean_running"], "idle workers are removed"
    assert "peak" in result.stdout and "clean workers 0  (clean done)" in result.stdout
    assert_same_output(run / "clean", local)
