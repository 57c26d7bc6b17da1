"""Parallel layout: config and layout checks, the memory estimate, and construction of the Ascend-only pieces."""

from __future__ import annotations

import math

import mindspore as ms
import pytest
from mindspore import nn
from mindspore.parallel.auto_parallel import AutoParallel
from mindspore.parallel.nn import Pipeline

from common.errors import ConfigError
from stages.train.config import ModelConfig, ParallelConfig, load_trainer_config
from stages.train.model import GPT, count_parameters
from stages.train.parallel import (
    apply_shard_strategies,
    assign_pipeline_stages,
    build_auto_parallel,
    memory_estimate,
    parameter_count,
    pipeline_cell,
    shard_strategies,
    validate_parallel,
)
from stages.train.step import setup_cpu

setup_cpu(1)

TINY = {"vocab_size": 64, "d_model": 32, "n_layers": 2, "n_heads": 4, "max_seq_len": 16}
COLUMN = ("attn.qkv", "mlp.up", "mlp.gate", "lm_head")
ROW = ("attn.proj", "mlp.down")


def tiny(**change: object) -> ModelConfig:
    return ModelConfig(**{**TINY, **change})


def parallel_overrides(values: dict) -> list[str]:
    return [f"parallel.{key}={value!r}" for key, value in values.items()]


@pytest.mark.parametrize(("values", "fragments"), [
    ({"data_parallel": 0}, ["parallel.data_parallel: Input should be greater than 0, got 0"]),
    ({"model_parallel": 1.5}, ["parallel.model_parallel: Input should be a valid integer, got 1.5"]),
    ({"pipeline_stages": True}, ["parallel.pipeline_stages: Input should be a valid integer, got True"]),
    ({"micro_batches": -1}, ["parallel.micro_batches: Input should be greater than 0, got -1"]),
    ({"optimizer_sharding": "yes"}, ["parallel.optimizer_sharding: Input should be a valid boolean, got 'yes'"]),
    ({"tensor_parallel": 2}, ["parallel.tensor_parallel: unknown key"]),
])
def test_config_field_errors(values: dict, fragments: list[str]) -> None:
    with pytest.raises(ConfigError) as err:
        load_trainer_config(None, parallel_overrides(values))
    assert all(f in str(err.value) for f in fragments), str(err.value)


def test_config_from_mapping() -> None:
    built = load_trainer_config(None, parallel_overrides({"data_parallel": 2, "optimizer_sharding": True})).parallel
    assert built == ParallelConfig(data_parallel=2, optimizer_sharding=True)
    assert built.world_size == 2
    assert ParallelConfig() == ParallelConfig(data_parallel=1, model_parallel=1, pipeline_stages=1,
                                              optimizer_sharding=False, micro_batches=1)


@pytest.mark.parametrize(("parallel", "world", "model", "batch", "device", "fragments"), [
    (ParallelConfig(data_parallel=1, model_parallel=2), 2, tiny(), 8, "CPU",
     ["parallel.model_parallel=2", "run only on Ascend", "CPU backend", "CPU supports data parallel only"]),
    (ParallelConfig(pipeline_stages=2, micro_batches=2), 2, tiny(), 8, "CPU",
     ["parallel.pipeline_stages=2", "run only on Ascend"]),
    (ParallelConfig(data_parallel=2, optimizer_sharding=True), 2, tiny(), 8, "GPU",
     ["parallel.optimizer_sharding=True", "GPU backend", "data parallel only"]),
    (ParallelConfig(data_parallel=2, model_parallel=2), 8, tiny(), 8, "Ascend",
     ["2 × 2 × 1 = 4", "world size is 8", "product is 8", "parallel.data_parallel=4"]),
    (ParallelConfig(model_parallel=4), 6, tiny(), 8, "Ascend",
     ["1 × 4 × 1 = 4", "world size is 6", "launch 4 processes"]),
    (ParallelConfig(data_parallel=2), 1, tiny(), 8, "CPU", ["2 × 1 × 1 = 2", "world size is 1"]),
    (ParallelConfig(), 0, tiny(), 8, "CPU", ["world size must be a positive integer, got 0"]),
    (ParallelConfig(model_parallel=8), 8, tiny(), 8, "Ascend",
     ["model.n_heads=4", "parallel.model_parallel=8", "(1, 2, 4)"]),
    (ParallelConfig(model_parallel=4), 4, tiny(ffn_dim=30), 8, "Ascend",
     ["model.hidden_dim=30", "parallel.model_parallel=4", "model.ffn_dim", "e.g. 32"]),
    (ParallelConfig(model_parallel=2), 2, tiny(vocab_size=65), 8, "Ascend",
     ["model.vocab_size=65", "parallel.model_parallel=2", "e.g. 66"]),
    (ParallelConfig(pipeline_stages=2, micro_batches=2), 2, tiny(n_layers=3), 8, "Ascend",
     ["model.n_layers=3", "parallel.pipeline_stages=2", "(1, 3)", "e.g. 4"]),
    (ParallelConfig(data_parallel=2, micro_batches=2), 2, tiny(), 8, "CPU",
     ["parallel.micro_batches=2", "pipeline_stages > 1", "set micro_batches to 1"]),
    (ParallelConfig(pipeline_stages=2), 2, tiny(), 8, "Ascend",
     ["parallel.micro_batches=1", "parallel.pipeline_stages=2", "micro_batches >= 2"]),
    (ParallelConfig(data_parallel=2), 2, tiny(), 7, "CPU",
     ["train.global_batch=7", "2 × 1 = 2", "e.g. 8"]),
    (ParallelConfig(data_parallel=2, pipeline_stages=2, micro_batches=4), 4, tiny(), 12, "Ascend",
     ["train.global_batch=12", "2 × 4 = 8", "e.g. 16"]),
    (ParallelConfig(), 1, tiny(), 0, "CPU", ["train.global_batch must be positive, got 0"]),
])
def test_layout_errors_name_the_key_and_numbers(parallel: ParallelConfig, world: int, model: ModelConfig,
                                                batch: int, device: str, fragments: list[str]) -> None:
    with pytest.raises(ConfigError) as err:
        validate_parallel(parallel, world, model, batch, device)
    assert all(f in str(err.value) for f in fragments), str(err.value)


@pytest.mark.parametrize(("parallel", "world", "model", "batch", "device"), [
    (ParallelConfig(), 1, tiny(), 8, "CPU"),
    (ParallelConfig(data_parallel=2), 2, tiny(), 8, "CPU"),
    (ParallelConfig(data_parallel=2, model_parallel=2, pipeline_stages=2, optimizer_sharding=True, micro_batches=4),
     8, tiny(n_layers=4), 16, "Ascend"),
    (ParallelConfig(model_parallel=4), 4, tiny(mlp="gelu"), 1, "Ascend"),
])
def test_valid_layouts_pass_and_the_same_layout_on_twice_the_world_is_refused(
        parallel: ParallelConfig, world: int, model: ModelConfig, batch: int, device: str) -> None:
    assert validate_parallel(parallel, world, model, batch, device) is None
    with pytest.raises(ConfigError, match=f"= {world}, but the world size is {2 * world}"):
        validate_parallel(parallel, 2 * world, model, batch, device)


@pytest.mark.parametrize("change", [
    {"mlp": "gelu", "norm": "layernorm", "position": "learned", "tie_embeddings": False},
    {"mlp": "swiglu", "norm": "rmsnorm", "position": "rope", "tie_embeddings": True},
    {"mlp": "swiglu", "norm": "layernorm", "position": "learned", "tie_embeddings": True},
    {"mlp": "gelu", "norm": "rmsnorm", "position": "rope", "tie_embeddings": False, "ffn_dim": 40},
])
def test_parameter_count_matches_the_model(change: dict) -> None:
    cfg = tiny(**change)
    assert parameter_count(cfg) == count_parameters(GPT(cfg))


def test_memory_estimate_formula() -> None:
    cfg = tiny()
    est = memory_estimate(cfg, ParallelConfig(), micro_batch_size=2, seq_len=16)
    params = parameter_count(cfg)
    assert est.parameters == params
    assert (est.weights, est.optimizer, est.gradients) == (6 * params, 8 * params, 4 * params)
    s, b, h, a = 16, 2, 32, 4
    assert est.activations == 2 * s * b * h * (34 + 5 * a * s // h) + 4 * s * b * 64
    assert est.total == est.weights + est.optimizer + est.gradients + est.activations
    assert "parameters" in est.describe() and "total" in est.describe()
    fp32 = memory_estimate(cfg, ParallelConfig(), micro_batch_size=2, seq_len=16, mixed_precision=False)
    assert fp32.weights == 4 * params
    assert fp32.activations == 2 * (est.activations - 4 * s * b * 64) + 4 * s * b * 64


def test_memory_estimate_halves_optimizer_state_at_dp2_when_sharded() -> None:
    cfg = ModelConfig()
    plain = memory_estimate(cfg, ParallelConfig(data_parallel=2), 4, 512)
    sharded = memory_estimate(cfg, ParallelConfig(data_parallel=2, optimizer_sharding=True), 4, 512)
    assert sharded.optimizer * 2 == plain.optimizer
    assert (sharded.weights, sharded.gradients, sharded.activations) == (
        plain.weights, plain.gradients, plain.activations)


def test_memory_estimate_divides_parameters_and_activations_by_model_parallel() -> None:
    cfg = ModelConfig()
    one = memory_estimate(cfg, ParallelConfig(), 4, 512)
    two = memory_estimate(cfg, ParallelConfig(model_parallel=2), 4, 512)
    assert two.parameters == math.ceil(one.parameters / 2)
    assert two.activations < one.activations
    s, b, h, a, layers = 512, 4, cfg.d_model, cfg.n_heads, cfg.n_layers
    assert two.activations == math.ceil(layers * s * b * h * (10 + 12 + 5 * a * s / (h * 2)) + 4 * s * b * cfg.vocab_size / 2)


def test_memory_estimate_of_a_pipeline_stage_holds_fewer_parameters_and_the_same_activations() -> None:
    cfg = tiny(n_layers=4, tie_embeddings=False)
    one = memory_estimate(cfg, ParallelConfig(), 2, 16)
    staged = memory_estimate(cfg, ParallelConfig(pipeline_stages=2, micro_batches=4), 2, 16)
    assert staged.parameters < one.parameters
    assert staged.activations == one.activations


def _dense_cells(net: nn.Cell) -> dict[str, nn.Dense]:
    return {name: cell for name, cell in net.cells_and_names() if isinstance(cell, nn.Dense)}


@pytest.mark.parametrize("change", [{"mlp": "swiglu", "tie_embeddings": False}, {"mlp": "gelu", "tie_embeddings": True}])
def test_shard_strategies_set_on_every_dense_layer_and_the_embedding_divide_their_weights(change: dict) -> None:
    cfg = tiny(**change)
    parallel = ParallelConfig(data_parallel=2, model_parallel=2)
    net = GPT(cfg)
    keys = set(shard_strategies(cfg, parallel))
    assert ("mlp.gate" in keys) == (cfg.mlp == "swiglu")
    assert ("lm_head" in keys) == (not cfg.tie_embeddings) == ("head_matmul" not in keys)
    sharded = apply_shard_strategies(net, parallel)
    dense = _dense_cells(net)
    assert set(sharded) == set(dense) | {"wte"} | ({"head_matmul"} if cfg.tie_embeddings else set())
    for name, cell in dense.items():
        x_strategy, w_strategy = cell.matmul.attrs["in_strategy"]
        assert len(x_strategy) == 2 and len(w_strategy) == cell.weight.ndim == 2
        assert x_strategy[1] == w_strategy[1], name
        assert all(size % split == 0 for size, split in zip(cell.weight.shape, w_strategy, strict=True)), name
        kind = name.split(".", 2)[-1] if name.startswith("blocks.") else name
        assert w_strategy == ((2, 1) if kind in COLUMN else (1, 2)), name
        assert kind in COLUMN + ROW
    table, ids = net.wte.gather.attrs["in_strategy"]
    assert table == (2, 1) and ids == (2,)
    assert cfg.vocab_size % table[0] == 0
    if cfg.tie_embeddings:
        assert net.head_matmul.attrs["in_strategy"] == ((2, 1), table)


def test_assign_pipeline_stages_sets_monotonic_balanced_stage_attributes() -> None:
    net = GPT(tiny(n_layers=8, tie_embeddings=False, position="learned"))
    assign_pipeline_stages(net, ParallelConfig(pipeline_stages=4, micro_batches=4))
    stages = [block.pipeline_stage for block in net.blocks]
    assert stages == sorted(stages) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert (net.wte.pipeline_stage, net.wpe.pipeline_stage) == (0, 0)
    assert (net.final_norm.pipeline_stage, net.lm_head.pipeline_stage) == (3, 3)


# What AutoParallel does with optimizer sharding and the pipeline scheduler happens when semi-auto parallel compiles the
# graph, which needs Ascend; on CPU the public surface is the wrapped network, get_pipeline_stages() and the calls
# build_auto_parallel makes (spied on below). The private fields those calls set (_enable_parallel_optimizer, _optimizer_level,
# _pipeline_scheduler, ...) are not read back here: that would only echo the arguments.
@pytest.mark.parametrize(("parallel", "hsdp", "pipeline"), [
    (ParallelConfig(data_parallel=2, model_parallel=2, pipeline_stages=2, optimizer_sharding=True, micro_batches=4),
     [{"optimizer_level": "level1"}], [{"stages": 2, "scheduler": "1f1b"}]),
    (ParallelConfig(data_parallel=2, optimizer_sharding=True), [{"optimizer_level": "level1"}], []),
    (ParallelConfig(pipeline_stages=4, micro_batches=4), [], [{"stages": 4, "scheduler": "1f1b"}]),
    (ParallelConfig(data_parallel=2, model_parallel=2), [], []),
])
def test_build_auto_parallel_asks_for_sharding_and_stages_exactly_as_configured(
        monkeypatch: pytest.MonkeyPatch, parallel: ParallelConfig, hsdp: list[dict], pipeline: list[dict]) -> None:
    calls: dict[str, list[dict]] = {"hsdp": [], "pipeline": []}
    for name in calls:
        original = getattr(AutoParallel, name)

        def spy(self, *args, _name=name, _original=original, **kwargs):
            assert not args, f"AutoParallel.{_name} called with positional arguments {args}"
            calls[_name].append(kwargs)
            return _original(self, **kwargs)

        monkeypatch.setattr(AutoParallel, name, spy)
    modes = []
    original_init = AutoParallel.__init__

    def init_spy(self, network, *args, **kwargs):
        modes.append((args, kwargs))
        original_init(self, network, *args, **kwargs)

    monkeypatch.setattr(AutoParallel, "__init__", init_spy)
    net = GPT(tiny(n_layers=4))
    mode = ms.get_auto_parallel_context("parallel_mode")
    wrapped = build_auto_parallel(net, parallel)
    assert isinstance(wrapped, AutoParallel) and wrapped.network is net
    assert modes == [((), {"parallel_mode": "semi_auto"})]
    assert calls == {"hsdp": hsdp, "pipeline": pipeline}  # hsdp's shard_size left at -1: the whole dp group
    assert wrapped.get_pipeline_stages() == parallel.pipeline_stages
    assert ms.get_auto_parallel_context("parallel_mode") == mode  # nothing global is switched on


def test_pipeline_cell_splits_each_batch_into_the_configured_micro_batches() -> None:
    net = GPT(tiny(n_layers=4))
    micro = pipeline_cell(net, ParallelConfig(pipeline_stages=2, micro_batches=4))
    assert isinstance(micro, Pipeline) and micro.network is net
    assert micro.micro_size == 4 and len(micro.micro_inputs) == 4


def test_nothing_changes_when_every_axis_is_one() -> None:
    net = GPT(tiny(tie_embeddings=False))
    names = [p.name for p in net.get_parameters()]
    parallel = ParallelConfig()
    assert apply_shard_strategies(net, parallel) == []
    assign_pipeline_stages(net, parallel)
    assert pipeline_cell(net, parallel) is net
    build_auto_parallel(net, parallel)
    assert [p.name for p in net.get_parameters()] == names
    for _, cell in net.cells_and_names():
        assert not hasattr(cell, "pipeline_stage")
        assert all("in_strategy" not in prim.attrs for prim in cell._primitives.values() if prim is not None)
