"""The same command on a multi-node Ray cluster (a head and two workers on 127.0.0.1, token auth
on) gives the shards, manifests and tokens of local mode, byte for byte."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from kiln.ray_nodes import RayNodes
from tests.conftest import child_env, cli

pytestmark = pytest.mark.usefixtures("no_ray_in_this_process")

DEMO_DOCS = "1500"


def _outputs(root: Path) -> dict[str, bytes]:
    """Every file a stage hands on (shards, excluded shards, manifests, tokens), by path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not {"_work", "_logs", "demo"} & set(p.relative_to(root).parts)
            and p.name != "_stats.json"}


@pytest.mark.slow
def test_make_data_on_a_three_node_cluster_is_byte_identical_to_local_mode(tmp_path: Path):
    run_dir = tmp_path / "run"  # both runs use the same root: manifests record their input paths
    cli("-m", "kiln", "run", "--demo", "--demo-docs", DEMO_DOCS, "--data-dir", str(run_dir), timeout=900)
    local = run_dir.rename(tmp_path / "local")
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32), "RAY_USAGE_STATS_ENABLED": "0"}
    with RayNodes(child_env(**auth)) as nodes:
        nodes.start_head(num_cpus=0)
        for count in (2, 3):  # one at a time: two raylets starting at once on one host can collide
            nodes.add_worker(num_cpus=1, resources='{"clean": 1}')
            nodes.wait_for_nodes(count)
        cluster = run_dir
        result = cli("-m", "kiln", "run", "--demo", "--demo-docs", DEMO_DOCS, "--data-dir", str(cluster),
                     env=child_env(RAY_ADDRESS=nodes.address, **auth), timeout=900)
    assert f"connecting to the Ray cluster at {nodes.address}" in result.stderr
    expected, got = _outputs(local), _outputs(cluster)
    assert sorted(got) == sorted(expected)
    different = [name for name in expected if got[name] != expected[name]]
    assert different == []
    assert (cluster / "tokenize" / "train.bin").stat().st_size > 0
