"""Typed trainer configuration: model shape, optimizer and schedule, with checks that name the bad value."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from common.errors import ConfigError

NORMS = ("layernorm", "rmsnorm")
MLPS = ("gelu", "swiglu")
POSITIONS = ("rope", "learned")
ATTENTIONS = ("auto", "flash", "matmul")
OPTIMIZERS = ("auto", "adamw_weight_decay", "mint_adamw")
COMPUTE_DTYPES = ("auto", "float32", "bfloat16")


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)


def _choice(section: str, name: str, value: str, allowed: tuple[str, ...]) -> None:
    _check(value in allowed, f"{section}.{name}: {value!r} is not one of {list(allowed)}")


def _positive(section: str, name: str, value: int | float) -> None:
    _check(not isinstance(value, bool) and isinstance(value, int | float) and value > 0,
           f"{section}.{name} must be positive, got {value!r}")


def from_dict(cls: type, section: str, values: dict[str, Any]) -> Any:
    """Build a config dataclass from a mapping, refusing keys it does not know."""
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - known)
    _check(not unknown, f"{section}: unknown keys {unknown} (known: {sorted(known)})")
    return cls(**values)


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer. ``ffn_dim`` defaults to 4·d_model (GELU) or 8/3·d_model rounded up to 64 (SwiGLU).

    ``compute_dtype`` is the matmul precision over fp32 master weights: ``bfloat16`` (Ascend only),
    ``float32``, or ``auto``: bf16 on Ascend, fp32 elsewhere.
    """

    vocab_size: int = 32000
    d_model: int = 768
    n_layers: int = 12
    n_heads: int = 12
    max_seq_len: int = 2048
    ffn_dim: int | None = None
    norm: str = "rmsnorm"
    mlp: str = "swiglu"
    position: str = "rope"
    attention: str = "auto"
    rope_theta: float = 10000.0
    norm_eps: float = 1e-6
    tie_embeddings: bool = True
    init_std: float = 0.02
    compute_dtype: str = "auto"

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "max_seq_len", "rope_theta", "norm_eps", "init_std"):
            _positive("model", name, getattr(self, name))
        if self.ffn_dim is not None:
            _positive("model", "ffn_dim", self.ffn_dim)
        _choice("model", "norm", self.norm, NORMS)
        _choice("model", "mlp", self.mlp, MLPS)
        _choice("model", "position", self.position, POSITIONS)
        _choice("model", "attention", self.attention, ATTENTIONS)
        _choice("model", "compute_dtype", self.compute_dtype, COMPUTE_DTYPES)
        _check(self.d_model % self.n_heads == 0,
               f"model.n_heads={self.n_heads} must divide model.d_model={self.d_model}")
        _check(self.position != "rope" or self.head_dim % 2 == 0,
               f"RoPE needs an even head dimension, got d_model/n_heads = {self.head_dim}")

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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class OptimConfig:
    """AdamW with linear warmup then cosine decay to ``min_lr``; ``clip_norm`` None means 0.5·sqrt(global_batch/1024).

    ``implementation`` picks the AdamW kernel: ``mint_adamw`` (fused, Ascend only), ``adamw_weight_decay``
    (``nn.AdamWeightDecay``, any device), or ``auto``: the first on Ascend, the second elsewhere.
    """

    lr: float = 3e-4
    min_lr: float = 3e-5
    warmup_ratio: float = 0.01
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    eps: float = 1e-8
    clip_norm: float | None = None
    implementation: str = "auto"

    def __post_init__(self) -> None:
        _positive("optim", "lr", self.lr)
        _positive("optim", "eps", self.eps)
        _check(0 <= self.min_lr <= self.lr, f"optim.min_lr={self.min_lr} must lie in [0, optim.lr={self.lr}]")
        _check(0 <= self.warmup_ratio < 1, f"optim.warmup_ratio={self.warmup_ratio} must lie in [0, 1)")
        _check(self.weight_decay >= 0, f"optim.weight_decay={self.weight_decay} must not be negative")
        for name in ("beta1", "beta2"):
            value = getattr(self, name)
            _check(0 <= value < 1, f"optim.{name}={value} must lie in [0, 1)")
        if self.clip_norm is not None:
            _positive("optim", "clip_norm", self.clip_norm)
        _choice("optim", "implementation", self.implementation, OPTIMIZERS)


DEVICES_AUTO = "auto"


@dataclass(frozen=True)
class TrainConfig:
    """The run itself: length, batch, data order, evaluation and checkpoint cadence.

    ``seq_len`` None takes the packed split's seq_len from meta.json. ``eval_every`` and
    ``checkpoint_every`` of 0 mean only at the end; a progress line is printed every
    ``log_every`` steps. ``device`` names the MFU peak (a key of
    the metrics peak table) or ``auto``: the CPU estimate on CPU.
    """

    steps: int = 200
    global_batch: int = 8
    seq_len: int | None = None
    seed: int = 0
    eval_every: int = 50
    eval_batches: int = 8
    checkpoint_every: int = 50
    log_every: int = 10
    threads: int = 2
    device: str = DEVICES_AUTO

    def __post_init__(self) -> None:
        for name in ("steps", "global_batch", "eval_batches", "log_every", "threads"):
            _positive("train", name, getattr(self, name))
        if self.seq_len is not None:
            _positive("train", "seq_len", self.seq_len)
        for name in ("eval_every", "checkpoint_every"):
            value = getattr(self, name)
            _check(isinstance(value, int) and not isinstance(value, bool) and value >= 0,
                   f"train.{name} must be an integer >= 0, got {value!r}")
        _check(isinstance(self.seed, int) and not isinstance(self.seed, bool), f"train.seed must be an integer, got {self.seed!r}")
