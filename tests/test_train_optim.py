"""AdamW groups, warmup + cosine learning rates and the default clipping norm."""

from __future__ import annotations

import math

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, mint, nn

from common.errors import ConfigError
from stages.train.config import ModelConfig, OptimConfig, load_trainer_config
from stages.train.model import GPT
from stages.train.optim import (
    WarmupCosine,
    apply_schedule,
    build_optimizer,
    clip_norm_for,
    decays,
    lr_table,
    warmup_cosine,
    warmup_steps,
)
from stages.train.step import setup_cpu

setup_cpu(1)

CFG = OptimConfig(lr=1e-3, min_lr=1e-4, warmup_ratio=0.01)


def lr_at(step: int, cfg: OptimConfig, total_steps: int) -> float:
    return float(warmup_cosine(np.float64(step), cfg, total_steps))


def test_warmup_then_cosine_at_chosen_steps() -> None:
    total = 1000
    assert warmup_steps(total, 0.01) == 10
    assert lr_at(0, CFG, total) == pytest.approx(1e-4)
    assert lr_at(4, CFG, total) == pytest.approx(5e-4)
    assert lr_at(9, CFG, total) == pytest.approx(1e-3)
    assert lr_at(10, CFG, total) == pytest.approx(1e-3)
    midpoint = 10 + (total - 1 - 10) / 2
    assert lr_at(math.floor(midpoint), CFG, total) == pytest.approx(5.5e-4, rel=1e-2)
    assert lr_at(total - 1, CFG, total) == pytest.approx(1e-4)
    assert lr_at(total + 50, CFG, total) == pytest.approx(1e-4)
    assert all(lr_at(s, CFG, total) >= lr_at(s + 1, CFG, total) for s in range(10, total))
    table = lr_table(CFG, total)
    assert table.dtype == np.float64 and table.tolist() == [lr_at(s, CFG, total) for s in range(total)]


def test_in_graph_schedule_matches_python() -> None:
    schedule = WarmupCosine(CFG, 1000)
    for step in (0, 4, 9, 10, 300, 504, 999, 1200):
        got = float(schedule(Tensor([step], ms.int32)).asnumpy()[0])
        assert got == pytest.approx(lr_at(step, CFG, 1000), rel=1e-5), step


def test_no_warmup() -> None:
    cfg = OptimConfig(lr=1e-3, min_lr=0.0, warmup_ratio=0.0)
    assert lr_at(0, cfg, 100) == pytest.approx(1e-3)
    assert float(WarmupCosine(cfg, 100)(Tensor([0], ms.int32)).asnumpy()[0]) == pytest.approx(1e-3)


def test_clip_norm_default_and_override() -> None:
    assert clip_norm_for(CFG, 1024) == pytest.approx(0.5)
    assert clip_norm_for(CFG, 256) == pytest.approx(0.25)
    assert clip_norm_for(CFG, 4096) == pytest.approx(1.0)
    assert clip_norm_for(OptimConfig(clip_norm=1.0), 256) == 1.0


def test_weight_decay_only_on_matrices() -> None:
    model = GPT(ModelConfig(vocab_size=32, d_model=16, n_layers=1, n_heads=2, max_seq_len=8, norm="layernorm"))
    optimizer = build_optimizer(model, OptimConfig(weight_decay=0.1), 100)
    decayed = {p.name for p in model.trainable_params() if decays(p)}
    assert "wte.embedding_table" in decayed and "blocks.0.attn.qkv.weight" in decayed
    assert not any(name.endswith((".bias", "norm.weight")) for name in decayed)
    assert optimizer.beta1.asnumpy() == pytest.approx(0.9) and optimizer.beta2.asnumpy() == pytest.approx(0.95)
    flags = dict(zip([p.name for p in optimizer.parameters], optimizer.decay_flags, strict=True))
    assert {name for name, flag in flags.items() if flag} == decayed


@pytest.mark.parametrize(("change", "message"), [
    ({"min_lr": 1.0}, "optim.min_lr"),
    ({"warmup_ratio": 1.0}, "optim.warmup_ratio"),
    ({"beta2": 1.0}, "optim.beta2"),
    ({"clip_norm": 0.0}, "optim.clip_norm"),
])
def test_config_errors(change: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_trainer_config(None, [f"optim.{key}={value!r}" for key, value in change.items()])


def test_optimizer_switch_builds_adamw_weight_decay_on_cpu_and_a_mint_adamw_whose_group_lrs_apply_schedule_sets() -> None:
    model = GPT(ModelConfig(vocab_size=64, d_model=16, n_layers=1, n_heads=2, max_seq_len=8))
    assert isinstance(build_optimizer(model, CFG, 100), nn.AdamWeightDecay)
    fused = build_optimizer(model, OptimConfig(lr=1e-3, min_lr=1e-4, warmup_ratio=0.1, implementation="mint_adamw"), 100)
    assert isinstance(fused, mint.optim.AdamW)
    decayed, plain = fused.param_groups
    assert decayed["weight_decay"] == 0.1 and plain["weight_decay"] == 0.0
    assert all(decays(p) for p in decayed["params"]) and not any(decays(p) for p in plain["params"])
    cfg = OptimConfig(lr=1e-3, min_lr=1e-4, warmup_ratio=0.1)
    rates = lr_table(cfg, 100)
    for step in (0, 9, 10, 60, 99):
        apply_schedule(fused, rates[step])
        assert [float(g["lr"].asnumpy()) for g in fused.param_groups] == pytest.approx([lr_at(step, cfg, 100)] * 2)
    with pytest.raises(ConfigError, match="optim.implementation"):
        load_trainer_config(None, ["optim.implementation=adam"])
