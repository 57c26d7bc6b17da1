"""The same command on a Ray cluster gives the shards, manifests and tokens of local mode, byte for
byte: on a plain `ray start --head` that declares no Kiln resource, and with a second node on
127.0.0.1 that declares the clean stage's resource (token auth on). Local mode itself, run while that
cluster is up, starts its own private Ray instead of joining it. tests/test_ray_scheduling.py checks
that tasks no node could run fail the stage instead of waiting."""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path

import pytest

from kiln.ray_nodes import CURRENT_CLUSTER, RayNodes
from tests.conftest import REPO, child_env, cli

pytestmark = pytest.mark.usefixtures("no_ray_in_this_process")

DEMO_DOCS = "1000"


def _outputs(root: Path) -> dict[str, bytes]:
    """Every file a stage hands on (shards, excluded shards, manifests, tokens), by path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not {"_work", "_logs", "demo"} & set(p.relative_to(root).parts)
            and p.name != "_stats.json"}


def _assert_same_outputs(local: Path, cluster: Path) -> None:
    expected, got = _outputs(local), _outputs(cluster)
    assert sorted(got) == sorted(expected)
    different = [name for name in expected if got[name] != expected[name]]
    assert different == []
    assert (cluster / "tokenize" / "train.bin").stat().st_size > 0


@pytest.mark.slow
def test_make_data_on_ray_clusters_is_byte_identical_to_local_mode(tmp_path: Path):
    run_dir = tmp_path / "run"  # every run uses the same root: manifests record their input paths
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32), "RAY_USAGE_STATS_ENABLED": "0"}
    with RayNodes(child_env(**auth)) as nodes:
        nodes.start_head(num_cpus=2)  # a plain cluster: `ray start --head --num-cpus=2`, no custom resource
        assert str(nodes.port) in CURRENT_CLUSTER.read_text(), "the cluster a plain ray.init() would join"
        reference = cli("-m", "kiln", "run", "--demo", "--demo-docs", DEMO_DOCS, "--data-dir", str(run_dir),
                        timeout=900)
        assert "starting a private local Ray with" in reference.stderr
        assert "connecting to the Ray cluster" not in reference.stderr
        local = run_dir.rename(tmp_path / "local")

        env = child_env(RAY_ADDRESS=nodes.address, **auth)
        plain = subprocess.run(["make", "data", f"DATA_DIR={run_dir}", f"DEMO_DOCS={DEMO_DOCS}"], cwd=REPO, env=env,
                               capture_output=True, text=True, timeout=900)
        assert plain.returncode == 0, plain.stdout + plain.stderr
        assert f"connecting to the Ray cluster at {nodes.address}" in plain.stderr
        assert "no node of the Ray cluster declares the resource 'clean': clean runs on any node" in plain.stderr
        _assert_same_outputs(local, run_dir)

        nodes.add_worker(num_cpus=2, resources='{"clean": 2}')  # now clean runs on this worker alone
        nodes.wait_for_nodes(2)
        run_dir.rename(tmp_path / "plain")
        result = cli("-m", "kiln", "run", "--demo", "--demo-docs", DEMO_DOCS, "--data-dir", str(run_dir),
                     env=env, timeout=900)
    assert "declares the resource" not in result.stderr
    _assert_same_outputs(local, run_dir)
