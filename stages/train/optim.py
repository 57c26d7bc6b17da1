"""AdamW with decay on matrices only, linear warmup + cosine schedule, and the default clipping norm."""

from __future__ import annotations

import math
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, mint, nn, ops

from stages.train.config import OptimConfig


def warmup_steps(total_steps: int, warmup_ratio: float) -> int:
    """Steps of linear warmup: ``warmup_ratio`` of the run, rounded up when the ratio is positive."""
    return math.ceil(total_steps * warmup_ratio)


def warmup_cosine(steps: Any, cfg: OptimConfig, total_steps: int, xp: Any = np) -> Any:
    """The learning rate of 0-based ``steps``: (step + 1) / warmup · lr during warmup, then cosine from lr to
    min_lr, reached at the last step, and min_lr beyond it.

    The one formula of the schedule, for both sides: ``xp`` is numpy for float64 arrays (the rates the
    trainer logs and sets on mint's AdamW) or ``mindspore.ops`` for float32 tensors (nn.AdamWeightDecay's
    in-graph schedule, :class:`WarmupCosine`).
    """
    warmup = warmup_steps(total_steps, cfg.warmup_ratio)
    decay_steps = max(total_steps - 1 - warmup, 1)
    warm = cfg.lr * (steps + 1.0) / max(warmup, 1)
    progress = xp.clip((steps - warmup) / decay_steps, 0.0, 1.0)
    cosine = cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1.0 + xp.cos(math.pi * progress))
    return xp.where(steps < warmup, warm, cosine)


def lr_table(cfg: OptimConfig, total_steps: int) -> np.ndarray:
    """The float64 learning rate of each of the run's ``total_steps`` steps."""
    return warmup_cosine(np.arange(total_steps, dtype=np.float64), cfg, total_steps)


class WarmupCosine(nn.learning_rate_schedule.LearningRateSchedule):
    """:func:`warmup_cosine` in the optimizer's graph, of its step counter."""

    def __init__(self, cfg: OptimConfig, total_steps: int):
        super().__init__()
        self.cfg = cfg
        self.total_steps = total_steps

    def construct(self, global_step: Tensor) -> Tensor:
        return warmup_cosine(ops.cast(global_step, ms.float32), self.cfg, self.total_steps, ops)


def default_clip_norm(global_batch: int) -> float:
    """0.5 · sqrt(global_batch / 1024): 0.5 at a global batch of 1024 sequences."""
    return 0.5 * math.sqrt(global_batch / 1024)


def clip_norm_for(cfg: OptimConfig, global_batch: int) -> float:
    """The configured clipping norm, or the default for this global batch."""
    return cfg.clip_norm if cfg.clip_norm is not None else default_clip_norm(global_batch)


def decays(param: ms.Parameter) -> bool:
    """Weight decay applies to matrices and embeddings (≥ 2-D), never to norms' gains or biases."""
    return len(param.shape) >= 2


def resolve_implementation(choice: str) -> str:
    """``auto`` means ``mint_adamw`` on Ascend and ``adamw_weight_decay`` elsewhere (mint's AdamW has no CPU kernel)."""
    if choice == "auto":
        return "mint_adamw" if ms.get_context("device_target") == "Ascend" else "adamw_weight_decay"
    return choice


def build_optimizer(model: nn.Cell, cfg: OptimConfig, total_steps: int) -> nn.Optimizer:
    """AdamW over two groups, decayed and not: ``nn.AdamWeightDecay`` with the schedule in the graph, or
    ``mint.optim.AdamW`` whose per-group learning rates :func:`apply_schedule` sets before each step."""
    params = model.trainable_params()
    groups = [
        {"params": [p for p in params if decays(p)], "weight_decay": cfg.weight_decay},
        {"params": [p for p in params if not decays(p)], "weight_decay": 0.0},
    ]
    if resolve_implementation(cfg.implementation) == "mint_adamw":
        first = float(warmup_cosine(np.float64(0.0), cfg, total_steps))
        return mint.optim.AdamW(groups, lr=first, betas=(cfg.beta1, cfg.beta2), eps=cfg.eps)
    return nn.AdamWeightDecay(groups, learning_rate=WarmupCosine(cfg, total_steps),
                              beta1=cfg.beta1, beta2=cfg.beta2, eps=cfg.eps)


def apply_schedule(optimizer: nn.Optimizer, lr: float) -> None:
    """Set this step's learning rate ``lr`` on an optimizer that keeps it in parameters (mint's AdamW).

    ``ops.assign`` reaches an already compiled step (``set_data`` would not); nn.AdamWeightDecay
    computes the schedule in its graph from its own step counter, so it needs nothing here.
    """
    if isinstance(optimizer, mint.optim.AdamW):
        rate = Tensor(lr, ms.float32)
        for group in optimizer.param_groups:
            ops.assign(group["lr"], rate)
