"""The trainer's configuration: one YAML file with the sections model, optim, train, health, parallel and ascend.

Each section is a strict :class:`common.config_loader.Section`; :func:`load_trainer_config` layers the
file and ``--set section.key=value`` overrides over the defaults with the data stages' loader,
so errors read ``<file or --set>: <section.key>: <what is wrong>``. A check against another key
validates its default too (``validate_default``), so it holds whichever of the two was set.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from common.config_loader import Section, fingerprint, load_layers


class ModelConfig(Section):
    """A decoder-only transformer. ``ffn_dim`` defaults to 4·d_model (GELU) or 8/3·d_model rounded up to 64 (SwiGLU).

    ``compute_dtype`` is the matmul precision over fp32 master weights: ``bfloat16`` (Ascend only),
    ``float32``, or ``auto``: bf16 on Ascend, fp32 elsewhere.
    """

    vocab_size: int = Field(default=32000, gt=0)
    d_model: int = Field(default=768, gt=0)
    n_layers: int = Field(default=12, gt=0)
    n_heads: int = Field(default=12, gt=0, validate_default=True)
    max_seq_len: int = Field(default=2048, gt=0)
    ffn_dim: int | None = Field(default=None, gt=0)
    norm: Literal["layernorm", "rmsnorm"] = "rmsnorm"
    mlp: Literal["gelu", "swiglu"] = "swiglu"
    position: Literal["rope", "learned"] = "rope"
    attention: Literal["auto", "flash", "matmul"] = "auto"
    rope_theta: float = Field(default=10000.0, gt=0)
    norm_eps: float = Field(default=1e-6, gt=0)
    tie_embeddings: bool = True
    init_std: float = Field(default=0.02, gt=0)
    compute_dtype: Literal["auto", "float32", "bfloat16"] = "auto"

    @field_validator("n_heads")
    @classmethod
    def _heads_divide_width(cls, n_heads: int, info: ValidationInfo) -> int:
        d_model = info.data.get("d_model")
        if d_model is not None and d_model % n_heads:
            raise ValueError(f"must divide model.d_model={d_model}")
        return n_heads

    @model_validator(mode="after")
    def _rope_needs_even_heads(self) -> ModelConfig:
        if self.position == "rope" and self.head_dim % 2:
            raise ValueError(f"RoPE needs an even head dimension, got d_model/n_heads = {self.head_dim}")
        return self

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def hidden_dim(self) -> int:
        """Width of the MLP's hidden layer."""
        if self.ffn_dim is not None:
            return self.ffn_dim
        if self.mlp == "gelu":
            return 4 * self.d_model
        return 64 * math.ceil(8 * self.d_model / 3 / 64)


class OptimConfig(Section):
    """AdamW with linear warmup then cosine decay to ``min_lr``; ``clip_norm`` None means 0.5·sqrt(global_batch/1024).

    ``implementation`` picks the AdamW kernel: ``mint_adamw`` (fused, Ascend only), ``adamw_weight_decay``
    (``nn.AdamWeightDecay``, any device), or ``auto``: the first on Ascend, the second elsewhere.
    """

    lr: float = Field(default=3e-4, gt=0)
    min_lr: float = Field(default=3e-5, ge=0, validate_default=True)
    warmup_ratio: float = Field(default=0.01, ge=0, lt=1)
    weight_decay: float = Field(default=0.1, ge=0)
    beta1: float = Field(default=0.9, ge=0, lt=1)
    beta2: float = Field(default=0.95, ge=0, lt=1)
    eps: float = Field(default=1e-8, gt=0)
    clip_norm: float | None = Field(default=None, gt=0)
    implementation: Literal["auto", "adamw_weight_decay", "mint_adamw"] = "auto"

    @field_validator("min_lr")
    @classmethod
    def _min_lr_below_lr(cls, min_lr: float, info: ValidationInfo) -> float:
        lr = info.data.get("lr")
        if lr is not None and min_lr > lr:
            raise ValueError(f"must lie in [0, optim.lr={lr}]")
        return min_lr


class TrainConfig(Section):
    """The run itself: length, batch, data order, evaluation and checkpoint cadence, and the device.

    ``seq_len`` None takes the packed split's seq_len from meta.json. ``eval_every`` and
    ``checkpoint_every`` of 0 mean only at the end; a progress line (and a hardware sample) is
    written every ``log_every`` steps. ``device_target`` picks the back end (``auto``: Ascend when
    it is usable here, the CPU otherwise; see :mod:`stages.train.device`) and ``device_id`` the NPU
    (None: from the launcher's local rank, ``DEVICE_ID``). ``threads`` is the CPU operator thread
    count. ``peak_flops_device`` names the row of the MFU peak table (a key of
    :data:`stages.train.flops.PEAK_TFLOPS`, e.g. ``ascend-910b2``) or ``auto``: the CPU estimate on
    CPU. It was called ``device`` before; that name is refused with a pointer to the new ones.
    ``verify_tokens`` is how the token files are checked against meta.json's checksums at start
    (:meth:`common.tokens.TokenDataset.verify`: ``full``, ``sampled``, or ``auto`` by size).
    """

    steps: int = Field(default=200, gt=0)
    global_batch: int = Field(default=8, gt=0)
    seq_len: int | None = Field(default=None, gt=0)
    seed: int = 0
    eval_every: int = Field(default=50, ge=0)
    eval_batches: int = Field(default=8, gt=0)
    checkpoint_every: int = Field(default=50, ge=0)
    log_every: int = Field(default=10, gt=0)
    threads: int = Field(default=2, gt=0)
    device_target: Literal["auto", "cpu", "ascend"] = "auto"
    device_id: int | None = Field(default=None, ge=0)
    peak_flops_device: str = "auto"
    verify_tokens: Literal["auto", "full", "sampled"] = "auto"

    @model_validator(mode="before")
    @classmethod
    def _renamed_device_key(cls, data: object) -> object:
        if isinstance(data, dict) and "device" in data:
            raise ValueError(f"train.device (= {data['device']!r}) was renamed: the MFU peak-table row is now "
                             f"train.peak_flops_device, and the back end is chosen by train.device_target "
                             f"(auto, cpu or ascend)")
        return data


class AscendConfig(Section):
    """Ascend-only runtime settings, applied by :func:`stages.train.device.setup_device` (ignored on CPU).

    The defaults are those of MindFormers' pretraining template for a 64 GB Atlas 800T A2 (910B) card:
    ``max_device_memory`` caps MindSpore's device memory pool (``mindspore.runtime.set_memory``; the
    pool takes the smaller of this and what the card has), ``jit_level`` is the graph compiler's level
    (O0: kernel-by-kernel, O1: with fusion, O2: whole-graph sink), ``memory_optimize_level`` O1 turns
    on MindSpore's memory reuse optimisations, ``recompute`` recomputes each transformer block's
    activations in the backward pass (activation memory for ~1/3 more compute), and ``precision_mode``,
    when set, is passed to ``mindspore.device_context.ascend.op_precision.precision_mode``.
    """

    max_device_memory: str = Field(default="58GB", pattern=r"^\d+(\.\d+)?GB$")
    jit_level: Literal["O0", "O1", "O2"] = "O0"
    memory_optimize_level: Literal["O0", "O1"] = "O1"
    recompute: bool = False
    precision_mode: str | None = None


class HealthConfig(Section):
    """Thresholds for :class:`stages.train.health.HealthMonitor`.

    A step's loss is a spike when its z-score against the last ``spike_window`` healthy losses
    exceeds ``spike_zscore``; z-scores are computed once ``spike_min_history`` losses are known.
    The grad-norm median over the last ``band_window`` steps is healthy between
    ``healthy_low`` and ``healthy_high``; below ``warn_low`` or above ``warn_high`` it warns.
    """

    max_consecutive_skips: int = Field(default=10, ge=1)
    spike_window: int = Field(default=100, ge=1)
    spike_zscore: float = Field(default=6.0, gt=0)
    spike_patience: int = Field(default=3, ge=1)
    spike_min_history: int = Field(default=20, ge=1, validate_default=True)
    band_window: int = Field(default=100, ge=1)
    healthy_low: float = 1.0
    healthy_high: float = 3.0
    warn_low: float = 0.5
    warn_high: float = 5.0

    @field_validator("spike_min_history")
    @classmethod
    def _history_fits_window(cls, spike_min_history: int, info: ValidationInfo) -> int:
        window = info.data.get("spike_window")
        if window is not None and spike_min_history > window:
            raise ValueError(f"must not exceed health.spike_window ({window})")
        return spike_min_history

    @model_validator(mode="after")
    def _bands_in_order(self) -> HealthConfig:
        if not 0 < self.warn_low <= self.healthy_low <= self.healthy_high <= self.warn_high:
            raise ValueError("the grad-norm bands must satisfy 0 < warn_low <= healthy_low <= healthy_high "
                             "<= warn_high")
        return self


class ParallelConfig(Section):
    """How the world is split: ``data_parallel × model_parallel × pipeline_stages`` devices.

    ``optimizer_sharding`` splits optimizer state (and MindSpore's level1 also the fp32 weights)
    over the data-parallel ranks; ``micro_batches`` is the number of micro-batches each
    data-parallel rank feeds through the pipeline per step. :func:`stages.train.parallel.validate_parallel`
    checks a layout against the world and the model.
    """

    data_parallel: int = Field(default=1, gt=0)
    model_parallel: int = Field(default=1, gt=0)
    pipeline_stages: int = Field(default=1, gt=0)
    optimizer_sharding: bool = False
    micro_batches: int = Field(default=1, gt=0)

    @property
    def world_size(self) -> int:
        return self.data_parallel * self.model_parallel * self.pipeline_stages


class TrainerConfig(Section):
    """Every section of a training run."""

    model: ModelConfig = ModelConfig()
    optim: OptimConfig = OptimConfig()
    train: TrainConfig = TrainConfig()
    health: HealthConfig = HealthConfig()
    parallel: ParallelConfig = ParallelConfig()
    ascend: AscendConfig = AscendConfig()

    def with_vocab_size(self, vocab_size: int) -> TrainerConfig:
        """The same configuration for a tokenizer of ``vocab_size`` ids (read from the packed tokens' meta.json)."""
        return self.replace(model=self.model.replace(vocab_size=vocab_size))

    def fingerprint(self) -> str:
        """sha256 of what a resume must not change: model, optimizer, schedule length, batch, seq_len and seed."""
        data = {k: getattr(self.train, k) for k in ("steps", "global_batch", "seq_len", "seed")}
        return fingerprint({"model": self.model.model_dump(), "optim": self.optim.model_dump(), "data": data})


def load_trainer_config(path: Path | None = None, overrides: Sequence[str] = ()) -> TrainerConfig:
    """The defaults, then the YAML file at ``path``, then ``--set section.key=value`` overrides."""
    return load_layers(TrainerConfig, [path] if path else [], overrides, example="train.steps=100",
                       hint="see stages/train/config.py for the valid keys")
