"""Per-step training metrics as JSONL, model FLOPs per token, MFU and a per-device peak table."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType

from common.errors import ConfigError

PEAK_TFLOPS: dict[str, float] = {
    "ascend-910b1": 414.0,
    "ascend-910b2": 376.0,
    "ascend-910b3": 313.0,
    "ascend-910b4": 280.0,
    "a100": 312.0,
    "h100-sxm": 989.0,
    "h200": 989.0,
    "rtx-4090": 165.0,
}
"""Dense bf16 peak TFLOPS per device, without sparsity.

These are vendor-published figures (Huawei for the Ascend 910B variants, NVIDIA for the
GPUs), not measurements; the RTX 4090 figure is with fp32 accumulation.
"""


def peak_flops(device: str) -> float:
    """Peak FLOP/s of ``device`` (a key of :data:`PEAK_TFLOPS`, case-insensitive)."""
    key = device.strip().lower()
    if key not in PEAK_TFLOPS:
        raise ConfigError(f"unknown device {device!r} for MFU; known: {', '.join(sorted(PEAK_TFLOPS))}")
    return PEAK_TFLOPS[key] * 1e12


def cpu_peak_flops(cores: int, ghz: float = 2.5, flops_per_cycle: int = 32) -> float:
    """A rough fp32 peak FLOP/s bound for a CPU: cores x GHz x FLOPs per cycle.

    32 FLOPs per cycle is two AVX2 FMA units x 8 fp32 lanes x 2 (multiply and add); real
    clocks and vector widths vary, so MFU against this figure is only an order of magnitude.
    """
    return cores * ghz * 1e9 * flops_per_cycle


def model_flops_per_token(n_params: int, n_layers: int, d_model: int, seq_len: int) -> float:
    """Training FLOPs per token: 6·N + 12·L·d·T.

    The PaLM/Chinchilla convention: 6·N for the forward and backward matrix multiplies over
    N parameters, plus 12·L·d·T for attention scores and values (L layers, width d, context
    T). Activation recomputation is not counted, so this is model FLOPs, not hardware FLOPs.
    """
    return 6.0 * n_params + 12.0 * n_layers * d_model * seq_len


def mfu(tokens_per_s: float, flops_per_token: float, peak_flops: float) -> float:
    """Model FLOPs utilisation: achieved model FLOP/s divided by the peak FLOP/s."""
    if peak_flops <= 0:
        raise ValueError(f"peak_flops must be > 0, got {peak_flops}")
    return tokens_per_s * flops_per_token / peak_flops


@dataclass(frozen=True)
class StepMetrics:
    """One JSONL line: what a training step achieved."""

    step: int
    loss: float
    grad_norm: float
    lr: float
    tokens_per_s: float
    step_time: float
    data_wait_fraction: float
    tflops: float
    mfu: float
    skipped: bool

    @classmethod
    def measure(cls, *, step: int, loss: float, grad_norm: float, lr: float, tokens: int, step_time: float,
                data_wait: float, flops_per_token: float, peak_flops: float, skipped: bool) -> StepMetrics:
        """Derive throughput, TFLOPS and MFU from a step's token count and timings (seconds)."""
        tokens_per_s = tokens / step_time if step_time > 0 else 0.0
        return cls(step=step, loss=loss, grad_norm=grad_norm, lr=lr, tokens_per_s=tokens_per_s,
                   step_time=step_time, data_wait_fraction=data_wait / step_time if step_time > 0 else 0.0,
                   tflops=tokens_per_s * flops_per_token / 1e12,
                   mfu=mfu(tokens_per_s, flops_per_token, peak_flops), skipped=skipped)


def _json_value(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class MetricsWriter:
    """Appends one JSON object per step to a JSONL file, flushed after every line.

    Non-finite numbers (a skipped step's NaN loss) are written as ``null`` so every line is valid JSON.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("a", encoding="utf-8")

    def write(self, metrics: StepMetrics) -> None:
        """Append ``metrics`` as one line and flush it."""
        record = {key: _json_value(value) for key, value in asdict(metrics).items()}
        self._file.write(json.dumps(record, allow_nan=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file; further writes fail."""
        self._file.close()

    def __enter__(self) -> MetricsWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
