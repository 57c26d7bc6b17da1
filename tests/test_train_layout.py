"""The parallel layout in the trainer: each data-parallel group reads its slice, the trainer builds the sharded
network and the AutoParallel wrapper (without compiling: semi-auto parallel runs on Ascend only), sharded
checkpoints verify, merge into one model.safetensors with MindSpore's unified_safetensors and load back, and the
Ascend example configuration fits its 32 NPUs."""

from __future__ import annotations

import json
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore.parallel.auto_parallel import AutoParallel
from mindspore.parallel.nn import Pipeline
from mindspore.train import node_strategy_pb2
from safetensors.numpy import load_file, save_file

from stages.train.checkpoint import (
    CheckpointError,
    CheckpointManager,
    file_sha256,
    load_checkpoint,
    merge_sharded,
    save_sharded_checkpoint,
    sharded_files,
    verify_sharded_checksums,
)
from stages.train.config import ModelConfig, OptimConfig, ParallelConfig, load_trainer_config
from stages.train.data import DataOrder
from stages.train.device import DeviceChoice
from stages.train.distributed import World
from stages.train.layout import data_parallel_rank, layout_record, pipeline_column, rank_position
from stages.train.model import GPT
from stages.train.optim import build_optimizer
from stages.train.parallel import memory_estimate, shard_strategies, validate_parallel
from stages.train.step import setup_cpu
from tests.token_files import write_token_folder

setup_cpu(1)

REPO = Path(__file__).resolve().parent.parent
ASCEND = DeviceChoice("Ascend", 0, "constructed on CPU for the test: nothing is compiled", "ascend")
TINY = {"vocab_size": 64, "d_model": 32, "n_layers": 2, "n_heads": 4, "max_seq_len": 16}


# -- data order ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("step", [0, 3, 7, 12])
def test_dp2_by_mp4_groups_read_identical_then_disjoint_slices(step: int) -> None:
    layout = ParallelConfig(data_parallel=2, model_parallel=4)
    n_windows, global_batch = 50, 8  # step 7 crosses an epoch boundary (samples 56..63 of 50 windows)
    orders = [DataOrder.for_rank(n_windows, global_batch, 5, rank, layout) for rank in range(8)]
    indices = [order.indices(step).tolist() for order in orders]
    assert [data_parallel_rank(rank, layout) for rank in range(8)] == [0, 0, 0, 0, 1, 1, 1, 1]
    group0, group1 = indices[:4], indices[4:]
    assert all(ix == group0[0] for ix in group0) and all(ix == group1[0] for ix in group1)
    assert len(group0[0]) == len(group1[0]) == 4
    single = DataOrder(n_windows, global_batch, 5).indices(step).tolist()
    assert group0[0] + group1[0] == single
    if step != 7:  # inside one epoch the two halves are distinct windows
        assert not set(group0[0]) & set(group1[0])


def test_pipeline_ranks_of_a_group_read_the_same_samples() -> None:
    layout = ParallelConfig(data_parallel=2, model_parallel=2, pipeline_stages=2, micro_batches=2)
    positions = [rank_position(rank, layout) for rank in range(8)]
    assert [(p.stage, p.data, p.model) for p in positions] == [
        (0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1), (1, 0, 0), (1, 0, 1), (1, 1, 0), (1, 1, 1)]
    reads = {rank: DataOrder.for_rank(40, 8, 1, rank, layout).indices(2).tolist() for rank in range(8)}
    assert reads[0] == reads[1] == reads[4] == reads[5] and reads[2] == reads[3] == reads[6] == reads[7]
    assert reads[0] + reads[2] == DataOrder(40, 8, 1).indices(2).tolist()
    assert pipeline_column(5, layout) == [1, 5]


def test_plain_data_parallel_keeps_its_order() -> None:
    layout = ParallelConfig(data_parallel=2)
    for rank in range(2):
        assert DataOrder.for_rank(100, 8, 5, rank, layout).indices(7).tolist() == \
            DataOrder(100, 8, 5, rank=rank, world_size=2).indices(7).tolist()


# -- the trainer builds the layout ---------------------------------------------------------------------------------

def write_tokens(folder: Path, vocab: int = 64, seq_len: int = 16) -> Path:
    from common.tokens import TokenDataset

    stream = np.random.default_rng(0).integers(2, vocab, 20 * seq_len + 1)
    return TokenDataset(write_token_folder(folder, {"train": stream}, vocab, seq_len))


def trainer_config(**parallel: object):
    overrides = [f"model.{k}={v}" for k, v in TINY.items()]
    overrides += ["train.steps=4", "train.global_batch=8", "train.peak_flops_device=ascend-910b2"]
    overrides += [f"parallel.{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in parallel.items()]
    return load_trainer_config(None, overrides)


def test_model_parallel_2_builds_the_sharded_network_and_the_wrapper(tmp_path: Path) -> None:
    from stages.train.trainer import Trainer

    tokens = write_tokens(tmp_path / "tokens")
    config = trainer_config(data_parallel=2, model_parallel=2)
    trainer = Trainer(config, tokens, tmp_path / "run", world=World(rank=3, size=4), device=ASCEND)
    assert trainer.semi_auto and isinstance(trainer.auto_parallel, AutoParallel)
    assert trainer.step_fn is trainer.auto_parallel
    assert trainer.auto_parallel._parallel_mode == "semi_auto"
    assert trainer.auto_parallel._dataset_strategy_config == ((2, 1), (2, 1))
    assert trainer.auto_parallel._save_strategy_file_path == str(tmp_path / "run" / "strategy" / "rank_3.ckpt")
    assert not trainer.auto_parallel._only_trainable_params
    assert not trainer.auto_parallel._enable_parallel_optimizer
    assert "blocks.0.attn.qkv" in trainer.sharded and "wte" in trainer.sharded and "head_matmul" in trainer.sharded
    net = trainer.model
    assert net.blocks[0].attn.qkv.matmul.attrs["in_strategy"] == ((2, 1), (2, 1))
    assert net.blocks[1].mlp.down.matmul.attrs["in_strategy"] == ((2, 2), (1, 2))
    assert net.wte.gather.attrs["in_strategy"] == ((2, 1), (2,))
    assert trainer.order.local_batch == 4 and trainer.order.offset == 4  # rank 3 = data-parallel group 1
    assert trainer.checkpoints.layout == layout_record(config.parallel)


def test_pipeline_and_optimizer_sharding_reach_the_wrapper(tmp_path: Path) -> None:
    from stages.train.trainer import Trainer

    tokens = write_tokens(tmp_path / "tokens")
    config = trainer_config(model_parallel=2, pipeline_stages=2, micro_batches=2, optimizer_sharding=True)
    trainer = Trainer(config, tokens, tmp_path / "run", world=World(rank=2, size=4), device=ASCEND)
    wrapper = trainer.auto_parallel
    assert wrapper.get_pipeline_stages() == 2 and wrapper._pipeline_scheduler == "1f1b"
    assert wrapper._enable_parallel_optimizer and wrapper._optimizer_level == "level1"
    assert isinstance(trainer.net_with_loss, Pipeline) and trainer.net_with_loss.micro_size == 2
    assert [block.pipeline_stage for block in trainer.model.blocks] == [0, 1]
    assert trainer.position.stage == 1


def test_model_parallel_1_builds_the_plain_step(tmp_path: Path) -> None:
    from stages.train.trainer import Trainer

    tokens = write_tokens(tmp_path / "tokens")
    trainer = Trainer(trainer_config(data_parallel=2), tokens, tmp_path / "run", world=World(rank=1, size=2),
                      device=DeviceChoice("CPU", None, "test", "cpu"))
    assert not trainer.semi_auto and trainer.auto_parallel is None and trainer.sharded == []
    assert not isinstance(trainer.step_fn, AutoParallel)
    for _, cell in trainer.model.cells_and_names():
        assert all("in_strategy" not in prim.attrs for prim in cell._primitives.values() if prim is not None)
    assert trainer.checkpoints.layout is None


def test_model_parallel_on_cpu_is_refused(tmp_path: Path) -> None:
    from common.errors import ConfigError
    from stages.train.trainer import Trainer

    tokens = write_tokens(tmp_path / "tokens")
    with pytest.raises(ConfigError, match="run only on Ascend"):
        Trainer(trainer_config(model_parallel=2), tokens, tmp_path / "run", world=World(rank=0, size=2),
                device=DeviceChoice("CPU", None, "test", "cpu"))


# -- sharded checkpoints -------------------------------------------------------------------------------------------

def strategy_file(path: Path, layouts: dict[str, tuple[list[int], list[int]]], stage: int = 0) -> Path:
    """A parameter-strategy file as MindSpore's compiler writes it (``ParallelStrategyMap``): for each parameter its
    device matrix and tensor map (-1: not split; k: split along device-matrix axis k counted from the right)."""
    strategy = node_strategy_pb2.ParallelStrategyMap(current_stage=1)
    item = strategy.parallel_strategy_item.add(node_name="kiln-test")
    item.parallel_strategys.stage = stage
    for name, (dev_matrix, tensor_map) in layouts.items():
        layout = strategy.parallel_layout_item.add(param_name=name).parallel_layouts
        layout.dev_matrix.add().dim.extend(dev_matrix)
        layout.tensor_map.add().dim.extend(tensor_map)
        layout.param_split_shape.add()
        layout.indices_offset.add()
        layout.field, layout.opt_weight_shard_step, layout.opt_weight_shard_size = 0, 0, 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(strategy.SerializeToString())
    return path


def model_parallel_layouts(tensors: dict[str, np.ndarray], mp: int) -> dict[str, tuple[list[int], list[int]]]:
    """The Megatron split of :func:`shard_strategies` as parameter layouts over the device matrix [1, mp]:
    column-parallel weights and the embedding split by rows, row-parallel ones by columns, the rest replicated."""
    strategies = shard_strategies(ModelConfig(**TINY), ParallelConfig(model_parallel=mp))
    columns = {key for key, value in strategies.items() if value[1] == (mp, 1)} | {"wte"}
    rows = {key for key, value in strategies.items() if value[1] == (1, mp)}
    layouts = {}
    for name, value in tensors.items():
        base = name.split(".", 1)[1] if name.startswith(("adam_m.", "adam_v.")) else name
        key = ".".join(base.split(".")[2:4]) if base.startswith("blocks.") else base.split(".")[0]
        if value.ndim == 2 and key in columns:
            layouts[name] = ([1, mp], [0, -1])
        elif value.ndim == 2 and key in rows:
            layouts[name] = ([1, mp], [-1, 0])
        elif value.ndim >= 1 and name != "global_step":
            layouts[name] = ([1, mp], [-1] * value.ndim)
    return layouts


def slice_for(value: np.ndarray, layout: tuple[list[int], list[int]] | None, rank: int, mp: int) -> np.ndarray:
    if layout is None or 0 not in layout[1]:
        return value
    axis = layout[1].index(0)
    return np.split(value, mp, axis=axis)[rank].copy()


def write_sharded(directory: Path, model: dict[str, np.ndarray], optimizer: dict[str, np.ndarray], mp: int,
                  state: dict) -> dict[str, tuple[list[int], list[int]]]:
    """A checkpoint directory as the ranks of an mp-way layout write it (what save_sharded_checkpoint produces)."""
    layout = {"data_parallel": 1, "model_parallel": mp, "pipeline_stages": 1, "optimizer_sharding": False,
              "micro_batches": 1, "world_size": mp}
    layouts = model_parallel_layouts({**model, **optimizer}, mp)
    for rank in range(mp):
        (directory / f"rank_{rank}").mkdir(parents=True)
        for name, tensors in (("model", model), ("optimizer", optimizer)):
            save_file({k: slice_for(v, layouts.get(k), rank, mp) for k, v in tensors.items()},
                      str(directory / f"rank_{rank}" / f"{name}.safetensors"))
        strategy_file(directory / "strategy" / f"rank_{rank}.ckpt", layouts)
    (directory / "layout.json").write_text(json.dumps(layout))
    (directory / "trainer_state.json").write_text(json.dumps(state))
    (directory / "checksums.json").write_text(json.dumps({f: file_sha256(directory / f) for f in sharded_files(layout)}))
    return layouts


def full_state() -> tuple[GPT, object, dict[str, np.ndarray], dict[str, np.ndarray]]:
    cfg = ModelConfig(**TINY)
    ms.set_seed(3)
    net = GPT(cfg)
    optimizer = build_optimizer(net, OptimConfig(), 10)
    model = {k: v.asnumpy() for k, v in net.parameters_dict().items()}
    rng = np.random.default_rng(1)
    optimizer_state = {k: (rng.standard_normal(v.shape).astype(np.float32) if k != "global_step" else
                           np.array([7], np.int32)) for k, v in optimizer.parameters_dict().items() if k not in model}
    return net, optimizer, model, optimizer_state


def test_a_two_way_sharded_checkpoint_merges_and_loads(tmp_path: Path) -> None:
    _, _, model, optimizer_state = full_state()
    state = {"step": 7, "model": ModelConfig(**TINY).model_dump(), "tokens": ""}
    directory = tmp_path / "checkpoints" / "latest"
    layouts = write_sharded(directory, model, optimizer_state, 2, state)
    assert layouts["blocks.0.attn.qkv.weight"] == ([1, 2], [0, -1])
    assert load_file(str(directory / "rank_1" / "model.safetensors"))["blocks.0.mlp.down.weight"].shape == (32, 64)
    verify_sharded_checksums(directory)
    merged = merge_sharded(directory)
    for name, tensors in (("model", model), ("optimizer", optimizer_state)):
        out = load_file(str(merged / f"{name}.safetensors"))
        assert sorted(out) == sorted(tensors)
        for key, value in tensors.items():
            assert out[key].tobytes() == value.tobytes(), key
    fresh_net = GPT(ModelConfig(**TINY))
    fresh_opt = build_optimizer(fresh_net, OptimConfig(), 10)
    assert load_checkpoint(tmp_path / "checkpoints", fresh_net, fresh_opt)["step"] == 7
    for key, value in model.items():
        assert fresh_net.parameters_dict()[key].asnumpy().tobytes() == value.tobytes(), key
    assert fresh_opt.parameters_dict()["adam_m.wte.embedding_table"].asnumpy().tobytes() == \
        optimizer_state["adam_m.wte.embedding_table"].tobytes()

    from stages.eval.checkpoint_model import load_model, read_state

    evaluated, loaded = load_model(tmp_path / "checkpoints", read_state(tmp_path / "checkpoints"))
    assert loaded["step"] == 7 and evaluated.blocks[1].mlp.down.weight.asnumpy().tobytes() == \
        model["blocks.1.mlp.down.weight"].tobytes()


def test_a_corrupt_shard_is_named(tmp_path: Path) -> None:
    _, _, model, optimizer_state = full_state()
    directory = tmp_path / "latest"
    write_sharded(directory, model, optimizer_state, 2, {"step": 1})
    shard = directory / "rank_1" / "optimizer.safetensors"
    blob = bytearray(shard.read_bytes())
    blob[-3] ^= 0xFF
    shard.write_bytes(bytes(blob))
    with pytest.raises(CheckpointError, match=r"rank_1/optimizer.safetensors: sha256 does not match"):
        verify_sharded_checksums(directory)
    (directory / "strategy" / "rank_0.ckpt").unlink()
    with pytest.raises(CheckpointError, match="rank_0.ckpt: missing"):
        verify_sharded_checksums(directory)


def test_save_sharded_then_resume_under_the_same_layout_only(tmp_path: Path) -> None:
    net, optimizer, model, _ = full_state()
    world = World()
    layout = layout_record(ParallelConfig())
    strategy = strategy_file(tmp_path / "run" / "strategy" / "rank_0.ckpt",
                             {k: ([1], [-1] * v.ndim) for k, v in model.items()})
    root = tmp_path / "run" / "checkpoints"
    state = {"step": 2, "config_fingerprint": "f", "best_val_loss": None}
    final = save_sharded_checkpoint(root, "latest", net, optimizer, state, world=world, layout=layout,
                                    strategy_file=strategy, tag="step2")
    assert sorted(p.name for p in final.iterdir()) == ["checksums.json", "layout.json", "rank_0", "strategy",
                                                        "trainer_state.json"]
    assert not list(root.glob(".latest.tmp-*"))
    verify_sharded_checksums(final)
    fresh = GPT(ModelConfig(**TINY))
    fresh_opt = build_optimizer(fresh, OptimConfig(), 10)
    assert load_checkpoint(root, fresh, fresh_opt)["step"] == 2
    assert fresh.wte.embedding_table.asnumpy().tobytes() == model["wte.embedding_table"].tobytes()

    def manager(layout_now: dict | None) -> CheckpointManager:
        return CheckpointManager(root, fresh, fresh_opt, [], fingerprint="f", record={}, every=0, total_steps=4,
                                 world=world, say=lambda _: None, layout=layout_now, strategy_file=strategy)

    assert manager(layout).load()
    other = layout_record(ParallelConfig(data_parallel=2))
    with pytest.raises(CheckpointError, match="resume on the same parallel layout"):
        manager(other).load()
    with pytest.raises(CheckpointError, match=r"written under the layout .* but this run is plain"):
        manager(None).load()


# -- the example configurations ------------------------------------------------------------------------------------

def test_the_ascend_example_fits_32_npus() -> None:
    from stages.train.__main__ import padded_vocab

    config = load_trainer_config(REPO / "configs" / "train-ascend-32npu.yaml")
    parallel = config.parallel
    assert parallel.world_size == 32 and (parallel.data_parallel, parallel.model_parallel,
                                          parallel.pipeline_stages) == (4, 4, 2)
    model = config.model.replace(vocab_size=padded_vocab(50257, parallel.model_parallel))
    assert model.vocab_size == 50260
    validate_parallel(parallel, 32, model, config.train.global_batch, "Ascend")
    micro_batch = config.train.global_batch // parallel.data_parallel // parallel.micro_batches
    estimate = memory_estimate(model, parallel, micro_batch, config.train.seq_len)
    assert estimate.total < 58 * 10**9, estimate.describe()
    assert config.train.device_target == "ascend" and config.ascend.max_device_memory == "58GB"
    # every tensor-parallel group inside one 8-NPU node
    assert {rank // 8 for rank in range(32) if rank_position(rank, parallel).data == 1
            and rank_position(rank, parallel).stage == 0} == {0}
    cpu = load_trainer_config(REPO / "configs" / "train-cpu.yaml")
    validate_parallel(cpu.parallel, 1, cpu.model, cpu.train.global_batch, "CPU")
    assert cpu.train.device_target == "auto"


def test_the_semi_auto_step_body_equals_the_plain_step_on_one_device() -> None:
    """What AutoParallel compiles on Ascend is this function; run as is on one CPU device it must match the plain step
    (the same loss, norm and update), the cross-stage sums included when they are identities."""
    from mindspore import Tensor, nn

    from stages.train.step import LossCell, make_parallel_train_step, make_train_step

    class Identity(nn.Cell):
        def construct(self, value: Tensor) -> Tensor:
            return value

    window = np.random.default_rng(4).integers(1, 64, size=(4, 17)).astype(np.int32)
    inputs, labels = Tensor(window[:, :-1]), Tensor(window[:, 1:])
    results = []
    for kind in ("plain", "semi-auto", "semi-auto with stage sums"):
        ms.set_seed(11)
        net = GPT(ModelConfig(**TINY))
        optimizer = build_optimizer(net, OptimConfig(lr=1e-2, warmup_ratio=0.0), 10)
        if kind == "plain":
            step = make_train_step(net, optimizer, clip_norm=1.0)
        else:
            step = make_parallel_train_step(LossCell(net), optimizer, 1.0,
                                            stage_sum=Identity() if "sums" in kind else None)
        loss, norm, applied = step(inputs, labels)
        results.append((float(loss.asnumpy()), float(norm.asnumpy()), bool(applied.asnumpy()),
                        net.blocks[0].attn.qkv.weight.asnumpy().copy()))
    (loss0, norm0, applied0, weight0) = results[0]
    assert applied0
    for loss, norm, applied, weight in results[1:]:
        assert applied and loss == pytest.approx(loss0, rel=1e-6) and norm == pytest.approx(norm0, rel=1e-5)
        np.testing.assert_allclose(weight, weight0, rtol=0, atol=1e-6)
