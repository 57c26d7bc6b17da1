"""The parallel layout's rank arithmetic, without MindSpore: which stage, data-parallel group and model-parallel
slot a global rank holds (the data order imports this, and it must stay numpy-only).

Rank order follows MindSpore's device matrix: the world splits into ``pipeline_stages`` contiguous
blocks of ``data_parallel × model_parallel`` ranks, and inside a stage the model-parallel index varies
fastest, so local rank ``i`` of a stage is data-parallel index ``i // model_parallel`` and
model-parallel index ``i % model_parallel``.
"""

from __future__ import annotations

from dataclasses import dataclass

from common.errors import ConfigError
from stages.train.config import ParallelConfig


@dataclass(frozen=True)
class RankPosition:
    """Where a global rank sits in the layout: its pipeline stage, data-parallel index and model-parallel index."""

    stage: int
    data: int
    model: int


def uses_semi_auto(parallel: ParallelConfig) -> bool:
    """True when the layout needs semi-auto parallel (model parallel, pipeline stages or optimizer sharding)."""
    return parallel.model_parallel > 1 or parallel.pipeline_stages > 1 or parallel.optimizer_sharding


def rank_position(rank: int, parallel: ParallelConfig) -> RankPosition:
    """The (stage, data, model) position of global ``rank`` in the layout (see the module docstring)."""
    _check(0 <= rank < parallel.world_size, f"rank {rank} is outside the layout's world of {parallel.world_size}")
    per_stage = parallel.data_parallel * parallel.model_parallel
    local = rank % per_stage
    return RankPosition(stage=rank // per_stage, data=local // parallel.model_parallel,
                        model=local % parallel.model_parallel)


def data_parallel_rank(rank: int, parallel: ParallelConfig) -> int:
    """The data-parallel group of ``rank``: which slice of each global batch it reads."""
    return rank_position(rank, parallel).data


def pipeline_column(rank: int, parallel: ParallelConfig) -> list[int]:
    """The ranks holding ``rank``'s data- and model-parallel position in every pipeline stage (one per stage)."""
    per_stage = parallel.data_parallel * parallel.model_parallel
    local = rank % per_stage
    return [stage * per_stage + local for stage in range(parallel.pipeline_stages)]


def dataset_strategy(parallel: ParallelConfig) -> tuple[tuple[int, int], tuple[int, int]]:
    """How (inputs, labels) arrive: split along the batch over data_parallel, whole along the sequence; the
    model-parallel ranks of a data-parallel group feed the same slice."""
    return ((parallel.data_parallel, 1), (parallel.data_parallel, 1))


def layout_record(parallel: ParallelConfig) -> dict[str, int | bool]:
    """The layout as checkpoints record it: a sharded checkpoint resumes only under the same one."""
    return {"data_parallel": parallel.data_parallel, "model_parallel": parallel.model_parallel,
            "pipeline_stages": parallel.pipeline_stages, "optimizer_sharding": parallel.optimizer_sharding,
            "micro_batches": parallel.micro_batches, "world_size": parallel.world_size}


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)
