"""Parallel layout: data × model × pipeline parallelism and optimizer sharding, its checks and a memory estimate.

Data parallel runs anywhere (msrun, one process per rank). Model parallel, pipeline stages and
optimizer sharding use MindSpore's semi-auto parallel, which runs on Ascend only; on Ascend the
trainer prepares the network with :func:`assign_pipeline_stages` and :func:`apply_shard_strategies`
on the GPT, :func:`pipeline_cell` around the network with its loss, and :func:`build_auto_parallel`
(+ :func:`configure_auto_parallel`) around the training step.

Which rank holds which (stage, data-parallel, model-parallel) position is :mod:`stages.train.layout`
(re-exported here): ranks that differ only in their model-parallel or pipeline position form one
data-parallel group and read the same samples (:class:`stages.train.data.DataOrder`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from mindspore import nn
from mindspore.parallel.auto_parallel import AutoParallel
from mindspore.parallel.nn import Pipeline

from common.errors import ConfigError
from stages.train.config import ModelConfig, ParallelConfig
from stages.train.layout import (  # noqa: F401  (re-exported: the layout's rank arithmetic lives in layout.py)
    RankPosition,
    data_parallel_rank,
    dataset_strategy,
    layout_record,
    pipeline_column,
    rank_position,
    uses_semi_auto,
)
from stages.train.model import GPT

Strategy = tuple[tuple[int, ...], ...]

MASTER_BYTES = 4
ADAM_MOMENTS = 2
OPTIMIZER_LEVEL = "level1"
PIPELINE_SCHEDULER = "1f1b"
_BLOCK_PREFIX = re.compile(r"^blocks\.\d+\.")


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def validate_parallel(parallel: ParallelConfig, world_size: int, model: ModelConfig, global_batch: int,
                      device_target: str) -> None:
    """Refuse a layout that cannot run, saying what to change.

    Rules: model parallel, pipeline stages and optimizer sharding only on Ascend; dp × mp × pp equals
    the world size; attention heads, FFN width and vocabulary divisible by model_parallel; n_layers
    divisible by pipeline_stages (equal stages, each with at least one layer); micro_batches above 1
    only with pipeline stages, and then at least one per stage; global_batch divisible by
    data_parallel × micro_batches.
    """
    dp, mp, pp, micro = parallel.data_parallel, parallel.model_parallel, parallel.pipeline_stages, parallel.micro_batches
    if device_target.lower() != "ascend":
        wanted = [f"parallel.{name}={getattr(parallel, name)}" for name, off in
                  (("model_parallel", 1), ("pipeline_stages", 1), ("optimizer_sharding", False))
                  if getattr(parallel, name) != off]
        _require(not wanted,
               f"{', '.join(wanted)}: model parallel, pipeline stages and optimizer sharding run only on Ascend "
               f"(MindSpore's semi-auto parallel does not run on the {device_target} backend); {device_target} "
               f"supports data parallel only: set model_parallel and pipeline_stages to 1, optimizer_sharding "
               f"to false, and parallel.data_parallel to the number of processes")
    _require(isinstance(world_size, int) and not isinstance(world_size, bool) and world_size > 0,
           f"the world size must be a positive integer, got {world_size!r}")
    hint = (f"e.g. parallel.data_parallel={world_size // (mp * pp)}" if world_size % (mp * pp) == 0
            else f"or launch {parallel.world_size} processes")
    _require(parallel.world_size == world_size,
           f"parallel: data_parallel × model_parallel × pipeline_stages = {dp} × {mp} × {pp} = "
           f"{parallel.world_size}, but the world size is {world_size}; change them so that the "
           f"product is {world_size} ({hint})")
    _require(model.n_heads % mp == 0,
           f"model.n_heads={model.n_heads} is not divisible by parallel.model_parallel={mp}: each model-parallel "
           f"rank holds whole attention heads; use a model_parallel that divides {model.n_heads} "
           f"({', '.join(map(str, _divisors(model.n_heads)))})")
    _require(model.hidden_dim % mp == 0,
           f"the FFN width model.hidden_dim={model.hidden_dim} is not divisible by parallel.model_parallel={mp}; "
           f"set model.ffn_dim to a multiple of {mp} (e.g. {_round_up(model.hidden_dim, mp)})")
    _require(model.vocab_size % mp == 0,
           f"model.vocab_size={model.vocab_size} is not divisible by parallel.model_parallel={mp}: the embedding "
           f"is split by vocabulary rows; use a model_parallel that divides {model.vocab_size} or pad the "
           f"vocabulary to a multiple of {mp} (e.g. {_round_up(model.vocab_size, mp)})")
    _require(model.n_layers % pp == 0,
           f"model.n_layers={model.n_layers} is not divisible by parallel.pipeline_stages={pp}: every stage holds "
           f"n_layers / pipeline_stages layers; use pipeline_stages in "
           f"({', '.join(map(str, _divisors(model.n_layers)))}) or set model.n_layers to a multiple of {pp} "
           f"(e.g. {_round_up(model.n_layers, pp)})")
    _require(pp > 1 or micro == 1,
           f"parallel.micro_batches={micro} needs parallel.pipeline_stages > 1: micro-batches feed the pipeline; "
           f"without pipeline stages set micro_batches to 1")
    _require(micro >= pp,
           f"parallel.micro_batches={micro} is less than parallel.pipeline_stages={pp}: the pipeline needs at "
           f"least one micro-batch per stage; set micro_batches >= {pp} (more shrink the pipeline bubble)")
    _require(global_batch > 0, f"train.global_batch must be positive, got {global_batch}")
    per_step = dp * micro
    _require(global_batch % per_step == 0,
           f"train.global_batch={global_batch} is not divisible by parallel.data_parallel × parallel.micro_batches "
           f"= {dp} × {micro} = {per_step}: each data-parallel rank splits its share into equal micro-batches; "
           f"use a multiple of {per_step} (e.g. {_round_up(global_batch, per_step)})")


def _parameter_parts(model: ModelConfig) -> tuple[int, int, int, int]:
    """(embeddings, one block, final norm, untied head) parameter counts, as stages/train/model.py builds them."""
    d, width = model.d_model, model.hidden_dim
    norm = 2 * d if model.norm == "layernorm" else d
    mlp = (3 if model.mlp == "swiglu" else 2) * d * width
    block = 2 * norm + 4 * d * d + mlp
    embeddings = model.vocab_size * d + (model.max_seq_len * d if model.position == "learned" else 0)
    head = 0 if model.tie_embeddings else model.vocab_size * d
    return embeddings, block, norm, head


def parameter_count(model: ModelConfig) -> int:
    """Trainable parameters of ``GPT(model)`` from its shape alone (a tied embedding counted once)."""
    embeddings, block, norm, head = _parameter_parts(model)
    return embeddings + model.n_layers * block + norm + head


def _human_bytes(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


@dataclass(frozen=True)
class MemoryEstimate:
    """Per-device bytes of one training step's largest consumers."""

    parameters: int
    weights: int
    optimizer: int
    gradients: int
    activations: int

    @property
    def total(self) -> int:
        return self.weights + self.optimizer + self.gradients + self.activations

    def describe(self) -> str:
        return (f"per device: {self.parameters:,} parameters; weights {_human_bytes(self.weights)}, "
                f"optimizer state {_human_bytes(self.optimizer)}, gradients {_human_bytes(self.gradients)}, "
                f"activations {_human_bytes(self.activations)}; total {_human_bytes(self.total)}")


def memory_estimate(model: ModelConfig, parallel: ParallelConfig, micro_batch_size: int, seq_len: int,
                    mixed_precision: bool = True) -> MemoryEstimate:
    """A rough per-device memory estimate of the busiest pipeline stage.

    Parameters per device: the larger of the first stage (embeddings + its layers) and the last
    (its layers + final norm + output head, a copy of the embedding when tied), divided by
    model_parallel (the replicated norm weights are a negligible share).
    Weights: bf16 compute copy + fp32 master (6 bytes per parameter) with ``mixed_precision``,
    fp32 alone (4 bytes) without. Gradients: fp32, 4 bytes per parameter. Optimizer state: AdamW's
    two fp32 moments, 8 bytes per parameter, divided by data_parallel with optimizer sharding
    (MindSpore's level1 also shards the fp32 master weights; that saving is left out).
    Activations, without recomputation, per Korthikanti et al. (2022) for 16-bit activations and
    tensor parallelism t = model_parallel: s·b·h·(10 + 24/t + 5·a·s/(h·t)) bytes per layer, which is
    s·b·h·(34 + 5·a·s/h) at t = 1; s = seq_len, b = micro_batch_size, h = d_model, a = n_heads.
    A stage keeps min(pipeline_stages, micro_batches) micro-batches in flight (1F1B) over its
    ceil(n_layers / pipeline_stages) layers; add the fp32 logits, 4·s·b·vocab/t bytes, and double
    the layer term for fp32 activations. FlashAttention does not store the s×s scores, so the
    5·a·s/h term makes this an upper bound on Ascend.
    """
    _require(micro_batch_size > 0 and seq_len > 0,
           f"a memory estimate needs a positive micro_batch_size and seq_len, got {micro_batch_size} and {seq_len}")
    dp, mp, pp = parallel.data_parallel, parallel.model_parallel, parallel.pipeline_stages
    embeddings, block, norm, head = _parameter_parts(model)
    layers = math.ceil(model.n_layers / pp)
    if pp == 1:
        stage = parameter_count(model)
    else:
        last_head = head or model.vocab_size * model.d_model
        stage = max(embeddings + layers * block, layers * block + norm + last_head)
    params = math.ceil(stage / mp)
    bf16_copy = 2 if mixed_precision else 0
    optimizer = ADAM_MOMENTS * MASTER_BYTES * params
    if parallel.optimizer_sharding:
        optimizer = math.ceil(optimizer / dp)
    s, b, h, a = seq_len, micro_batch_size, model.d_model, model.n_heads
    per_layer = s * b * h * (10 + 24 / mp + 5 * a * s / (h * mp))
    layer_bytes = per_layer * layers * min(pp, parallel.micro_batches) * (1 if mixed_precision else 2)
    logits = 4 * s * b * model.vocab_size / mp
    return MemoryEstimate(
        parameters=params,
        weights=(bf16_copy + MASTER_BYTES) * params,
        optimizer=optimizer,
        gradients=MASTER_BYTES * params,
        activations=math.ceil(layer_bytes + logits),
    )


def shard_strategies(model: ModelConfig, parallel: ParallelConfig) -> dict[str, Strategy]:
    """Megatron-style ``Primitive.shard`` input strategies, keyed by cell name.

    Keys under ``attn.``/``mlp.`` apply to the ``matmul`` of that nn.Dense in every block; ``wte``
    is the embedding's ``gather``; the output head is ``lm_head``'s ``matmul`` when untied and the
    GPT's ``head_matmul`` (x times the embedding table) when tied. Both compute
    MatMul(x (tokens, in), W (out, in), transpose_b=True): column-parallel layers (qkv, up, gate,
    head) split W's output rows over model_parallel, ((dp, 1), (mp, 1)); row-parallel
    layers (proj, down) split the shared input dimension, ((dp, mp), (1, mp)), and MindSpore
    inserts the AllReduce of their partial sums. The embedding table is split by vocabulary rows
    and the flattened token ids by data_parallel, ((mp, 1), (dp,)).
    """
    dp, mp = parallel.data_parallel, parallel.model_parallel
    column = ((dp, 1), (mp, 1))
    row = ((dp, mp), (1, mp))
    strategies: dict[str, Strategy] = {"wte": ((mp, 1), (dp,)), "attn.qkv": column, "attn.proj": row,
                                       "mlp.up": column, "mlp.down": row}
    if model.mlp == "swiglu":
        strategies["mlp.gate"] = column
    strategies["head_matmul" if model.tie_embeddings else "lm_head"] = column
    return strategies


def apply_shard_strategies(net: GPT, parallel: ParallelConfig) -> list[str]:
    """Set :func:`shard_strategies` on the GPT's primitives; returns the cell names sharded (none without model parallel).

    Operators without a strategy (attention scores, norms, the loss) take MindSpore's default
    data-parallel strategy.
    """
    if parallel.model_parallel == 1:
        return []
    strategies = shard_strategies(net.cfg, parallel)
    sharded = []
    for name, cell in net.cells_and_names():
        key = _BLOCK_PREFIX.sub("", name)
        if key not in strategies:
            continue
        primitive = cell.gather if isinstance(cell, nn.Embedding) else cell.matmul
        primitive.shard(strategies[key])
        sharded.append(name)
    if "head_matmul" in strategies:
        net.head_matmul.shard(strategies["head_matmul"])
        sharded.append("head_matmul")
    return sharded


def assign_pipeline_stages(net: GPT, parallel: ParallelConfig) -> None:
    """Block i goes to stage i·pp // n_layers; embeddings to the first stage, final norm and head to the last.

    Leaves the network untouched without pipeline stages.
    """
    pp = parallel.pipeline_stages
    if pp == 1:
        return
    n_layers = len(net.blocks)
    for i, block in enumerate(net.blocks):
        block.pipeline_stage = i * pp // n_layers
    net.wte.pipeline_stage = 0
    if net.learned_positions:
        net.wpe.pipeline_stage = 0
    net.final_norm.pipeline_stage = pp - 1
    if not net.tied:
        net.lm_head.pipeline_stage = pp - 1


def pipeline_cell(net_with_loss: nn.Cell, parallel: ParallelConfig) -> nn.Cell:
    """Split each step's batch into ``micro_batches`` for the pipeline; the cell itself without pipeline stages."""
    if parallel.pipeline_stages == 1:
        return net_with_loss
    return Pipeline(net_with_loss, parallel.micro_batches)


def build_auto_parallel(net: nn.Cell, parallel: ParallelConfig) -> AutoParallel:
    """Wrap the training cell for semi-auto parallel, with optimizer sharding and pipeline stages as configured.

    Optimizer sharding uses ``hsdp`` at level1 over each parameter's whole data-parallel group
    (weights and optimizer state split, gradients not); pipelines use the 1F1B scheduler.
    """
    wrapped = AutoParallel(net, parallel_mode="semi_auto")
    if parallel.optimizer_sharding:
        wrapped.hsdp(optimizer_level=OPTIMIZER_LEVEL)
    if parallel.pipeline_stages > 1:
        wrapped.pipeline(stages=parallel.pipeline_stages, scheduler=PIPELINE_SCHEDULER)
    return wrapped


def configure_auto_parallel(wrapped: AutoParallel, parallel: ParallelConfig, strategy_file: str) -> AutoParallel:
    """The trainer's settings on top of :func:`build_auto_parallel`: the batch arrives split by data parallel
    (:func:`dataset_strategy`), and the compiler writes every parameter's layout (optimizer state included)
    to ``strategy_file``, which a sharded checkpoint keeps for merging."""
    wrapped.dataset_strategy(dataset_strategy(parallel))
    wrapped.save_param_strategy_file(strategy_file)
    wrapped.disable_strategy_file_only_for_trainable_params()
    return wrapped
