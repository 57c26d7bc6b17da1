"""FLOPs accounting: a model's training FLOPs per token, device peaks (vendor table, CPU estimate) and MFU."""

from __future__ import annotations

import contextlib
from pathlib import Path

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


def cpu_features(cpuinfo: str | None = None) -> tuple[float, int]:
    """(GHz, fp32 FLOPs per cycle per core) of this CPU, read from /proc/cpuinfo when it exists.

    FLOPs per cycle: 64 with AVX-512 (two 512-bit FMA units × 16 lanes × 2), 32 with AVX2 + FMA,
    16 otherwise. The clock is the reported ``cpu MHz`` (often the nominal one; turbo clocks are
    higher), 2.5 GHz when unknown. An overestimate of the peak errs toward a lower MFU.
    """
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            cpuinfo = ""
    flags: set[str] = set()
    mhz: list[float] = []
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            flags.update(value.split())
        elif key.strip() == "cpu MHz":
            with contextlib.suppress(ValueError):
                mhz.append(float(value))
    flops = 64 if "avx512f" in flags else 32 if {"avx2", "fma"} <= flags else 16
    return (max(mhz) / 1000 if mhz else 2.5), flops


def cpu_peak_flops(cores: int, ghz: float | None = None, flops_per_cycle: int | None = None) -> float:
    """A rough fp32 peak FLOP/s for ``cores`` CPU cores: cores × GHz × FLOPs per cycle (see :func:`cpu_features`).

    Real clocks and vector units vary, so MFU against this figure is only an order of magnitude.
    """
    detected_ghz, detected_flops = cpu_features()
    return cores * (ghz or detected_ghz) * 1e9 * (flops_per_cycle or detected_flops)


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


def resolve_peak_flops(device: str, threads: int, device_target: str, npu_name: str | None = None) -> tuple[str, float]:
    """The MFU denominator and its name: the row ``device`` of :data:`PEAK_TFLOPS` (``train.peak_flops_device``),
    or for ``auto`` the estimate for ``threads`` cores on the CPU backend and, on Ascend, the row of the chip
    npu-smi names (``npu_name``, e.g. 910B2 -> ascend-910b2) when the table has it."""
    if device != "auto":
        return device, peak_flops(device)
    if device_target == "CPU":
        return f"cpu-{threads}-cores", cpu_peak_flops(threads)
    if npu_name and f"ascend-{npu_name.strip().lower()}" in PEAK_TFLOPS:
        key = f"ascend-{npu_name.strip().lower()}"
        return key, peak_flops(key)
    seen = f" (npu-smi names the chip {npu_name!r}, which has no row)" if npu_name else ""
    raise ConfigError(f"train.peak_flops_device must name the accelerator's row of the MFU peak table off the CPU"
                      f"{seen}: one of {', '.join(sorted(PEAK_TFLOPS))}")
