"""Ray start-up: a private local Ray sized to the machine, or the cluster named by ray.address / RAY_ADDRESS."""

from __future__ import annotations

import logging
import os

from pydantic import Field

from common.config_loader import Section
from common.pipeline import STAGES

log = logging.getLogger("kiln.ray")


class RayConfig(Section):
    """The Ray cluster the data stages run on: a private local Ray by default, or a cluster's address."""

    address: str | None = None
    """Ray cluster to use; null means the RAY_ADDRESS environment variable, and if that is unset too, a local Ray
    started for the run (no dashboard)."""
    num_cpus: int | None = Field(default=None, ge=1)
    """CPUs of the local Ray; null means every CPU of the machine."""
    object_store_memory_mb: int | None = Field(default=None, ge=64)
    """Object store size of the local Ray in MiB; null lets Ray choose."""
    stage_resources: dict[str, str] = Field(
        default_factory=lambda: {stage.name: stage.ray_resource for stage in STAGES if stage.ray_resource})
    """Stage -> a custom resource each of its work units asks for (one unit per task) where the cluster has it: the
    worker group that declares it (e.g. KubeRay's clean group, resources {clean: "4"}) then runs that stage. A
    local Ray declares every resource named here, one per CPU; on a cluster that declares none of them (a plain
    `ray start`) every stage runs on any node."""
    scale_on_demand: bool = False
    """Ask for a stage's resource even while no node declares it: true on a cluster whose autoscaler starts the
    nodes that declare it when tasks ask (KubeRay's clean group, scaling from 0)."""
    unschedulable_timeout_s: float = Field(default=60.0, gt=0)
    """Seconds the tasks of a stage may wait while no node of the cluster could ever run them (none declares the CPU
    or resource they ask for) before the stage fails naming what is missing. An autoscaling cluster needs long
    enough to start a node."""
    task_retries: int = Field(default=3, ge=0)
    """Times Ray reruns a task whose worker or node died (OOM kill, preemption, a lost node); a task that raises is
    not retried. Every task writes through temporary files and renames, so a rerun gives the same bytes."""


def _address(cfg: RayConfig) -> str | None:
    return cfg.address or os.environ.get("RAY_ADDRESS") or None


def ensure_ray(cfg: RayConfig) -> None:
    """Connect to Ray once per process: the configured/RAY_ADDRESS cluster, else a private local one.

    ``address="local"`` always starts a new Ray for this process, even when a ``ray start``
    cluster runs on the same machine (plain ``ray.init()`` would attach to that one).
    """
    import ray

    if ray.is_initialized():
        return
    address = _address(cfg)
    if address:
        log.info("connecting to the Ray cluster at %s", address)
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=True)
        return
    cpus = cfg.num_cpus or os.cpu_count() or 1
    log.info("starting a private local Ray with %d CPUs (no dashboard)", cpus)
    memory = cfg.object_store_memory_mb * 1024 * 1024 if cfg.object_store_memory_mb else None
    ray.init(
        address="local",
        num_cpus=cpus,
        resources={name: float(cpus) for name in sorted(set(cfg.stage_resources.values()))},
        include_dashboard=False,
        object_store_memory=memory,
        logging_level=logging.WARNING,
        log_to_driver=True,
    )


def ray_description(cfg: RayConfig) -> dict:
    """What the manifest's host facts say about Ray (not part of any fingerprint)."""
    address = _address(cfg)
    if address:
        return {"mode": "cluster", "address": address}
    return {"mode": "local", "num_cpus": cfg.num_cpus or os.cpu_count()}


def stage_resource(cfg: RayConfig, stage: str) -> str | None:
    """The custom resource ``stage``'s tasks ask for: its ``ray.stage_resources`` entry where some node of the
    cluster declares it or ``ray.scale_on_demand`` says an autoscaler starts such nodes, else None."""
    import ray

    resource = cfg.stage_resources.get(stage)
    if not resource or cfg.scale_on_demand or resource in ray.cluster_resources():
        return resource
    log.info("no node of the Ray cluster declares the resource %r: %s runs on any node with a free CPU "
             "(ray.stage_resources, ray.scale_on_demand)", resource, stage)
    return None


def unschedulable(shape: dict[str, float]) -> list[str] | None:
    """None when some live node of the cluster declares at least ``shape`` (busy or not); else the resources of
    ``shape`` that no live node declares enough of (empty when each exists, but on no single node): a task of
    that shape waits until a node with all of them joins."""
    import ray

    nodes = [node["Resources"] for node in ray.nodes() if node["Alive"]]
    if any(all(node.get(name, 0) >= amount for name, amount in shape.items()) for node in nodes):
        return None
    return [name for name, amount in shape.items() if not any(node.get(name, 0) >= amount for node in nodes)]

