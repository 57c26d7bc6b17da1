"""A stage asks for its custom Ray resource only where the cluster can provide it, and tasks that no node
could run fail the stage within ray.unschedulable_timeout_s, naming what is missing, instead of waiting."""

from __future__ import annotations

import logging

import pytest

from common.errors import KilnError
from common.ray_cluster import stage_resource
from common.runner import run_tasks
from tests.conftest import make_config

LOG = logging.getLogger("test")


def _double(x: int) -> int:
    return 2 * x


def test_tasks_no_node_could_run_fail_naming_the_missing_resource(ray_local):
    cfg = make_config("ray.num_cpus=2", "ray.unschedulable_timeout_s=2")
    with pytest.raises(KilnError) as err:
        run_tasks(_double, [(1,), (2,)], cfg, "clean", LOG, "test.unit", resource="nowhere")
    message = str(err.value)
    assert message.startswith("clean: no node of the Ray cluster could run its tasks, which each ask for "
                              "{'CPU': 1, 'nowhere': 1}, for 2 s (ray.unschedulable_timeout_s): no live node "
                              "declares 'nowhere'; declare it on the nodes meant for clean"), message
    assert "`ray start --resources='{\"nowhere\": <CPUs>}'`" in message
    assert "ray.scale_on_demand=false" in message
    assert sorted(run_tasks(_double, [(1,), (2,)], cfg, "clean", LOG, "test.unit", resource="clean")) == [2, 4]


def test_a_stage_asks_for_its_resource_only_where_the_cluster_has_it(ray_local):
    ray = make_config("ray.num_cpus=2").ray
    assert stage_resource(ray, "clean") == "clean"  # the local Ray declares every stage resource
    assert stage_resource(ray, "dedup") is None  # no entry: any node
    elsewhere = ray.replace(stage_resources={"clean": "clean-pool"})
    assert stage_resource(elsewhere, "clean") is None  # no node declares it: any node
    assert stage_resource(elsewhere.replace(scale_on_demand=True), "clean") == "clean-pool"
