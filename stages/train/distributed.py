"""Distributed plumbing: joining the msrun world, reducing gradients, and agreeing on a stop across ranks.

Started by msrun (or by :mod:`stages.train.launch` under MindCluster's AscendJob, with the same
``MS_ROLE``/``MS_SCHED_*``/``MS_NODE_ID`` variables), every worker calls :func:`join_world`. Plain data
parallel sets MindSpore's DATA_PARALLEL context and averages gradients with ``DistributedGradReducer``;
a semi-auto layout (model parallel, pipeline stages, optimizer sharding) leaves the global context
alone: the ``AutoParallel`` wrapper around the step carries its settings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import mindspore as ms
from mindspore import Tensor, nn, ops


@dataclass(frozen=True)
class World:
    """This process's place among the data-parallel ranks."""

    rank: int = 0
    size: int = 1

    @property
    def distributed(self) -> bool:
        return self.size > 1

    @property
    def is_main(self) -> bool:
        """Rank 0 alone writes checkpoints, metrics and logs."""
        return self.rank == 0


def launched_by_msrun() -> bool:
    """msrun (or the equivalent MS_ROLE/MS_SCHED_* variables) started this process as the scheduler or a worker."""
    return os.environ.get("MS_ROLE") in ("MS_SCHED", "MS_WORKER")


def is_scheduler() -> bool:
    """This process is the cluster's scheduler (``MS_ROLE=MS_SCHED``): it serves the workers and trains nothing."""
    return os.environ.get("MS_ROLE") == "MS_SCHED"


def serve_as_scheduler() -> None:
    """Run the scheduler: ``init()`` serves the cluster and returns (or ends the process) once the workers are done."""
    from mindspore.communication import init

    init()


def join_world(semi_auto: bool = False) -> World:
    """Initialise the collective backend when started by msrun (or the equivalent MS_* variables); a world of one
    otherwise. Plain data parallel also sets MindSpore's DATA_PARALLEL mode; ``semi_auto`` leaves the global
    parallel context to the ``AutoParallel`` wrapper.

    msrun runs this same program as the scheduler too: there ``init()`` serves the cluster and
    ends the process when the workers are done. Call after :func:`stages.train.device.setup_device`
    and before building the network.
    """
    if not launched_by_msrun():
        return World()
    from mindspore.communication import get_group_size, get_rank, init

    init()
    world = World(rank=get_rank(), size=get_group_size())
    if not semi_auto:
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    return world


def create_rank_group(name: str, ranks: list[int]) -> str:
    """Create the communication group ``name`` of ``ranks`` (every member calls this with the same arguments)."""
    from mindspore.communication import create_group

    create_group(name, ranks)
    return name


def gradient_reducer(parameters: list[ms.Parameter], world: World) -> nn.Cell | None:
    """Averages gradients over the ranks (None in a world of one)."""
    if not world.distributed:
        return None
    return nn.DistributedGradReducer(parameters, mean=True, degree=world.size)


class RankMean(nn.Cell):
    """Mean of a scalar over the ranks, so every rank reports and judges the same loss."""

    def __init__(self, world: World):
        super().__init__()
        self.size = float(world.size)
        self.all_reduce = ops.AllReduce()

    def construct(self, value: Tensor) -> Tensor:
        return self.all_reduce(value) / self.size


def agree_to_stop(requested: bool, world: World) -> bool:
    """True on every rank when any rank was asked to stop (a SIGTERM reaches ranks at different steps)."""
    if not world.distributed:
        return requested
    flag = Tensor([1.0 if requested else 0.0], ms.float32)
    return bool(ops.AllReduce()(flag).asnumpy()[0] > 0)  # the CPU backend reduces by sum only


def barrier(world: World) -> None:
    """Wait until every rank arrives (rank 0 finishing a checkpoint before the others exit)."""
    if world.distributed:
        ops.AllReduce()(Tensor([0.0], ms.float32)).asnumpy()
