"""Hardware samples for the metrics: NPU utilization, HBM, temperature and power on Ascend; the process's CPU
and RSS on CPU.

The trainer takes one sample every ``log_every`` steps (rank 0, for the NPUs of its node) and writes it
into that step's ``metrics.jsonl`` line under ``"hardware"`` and into TensorBoard under ``hw/``.
``npu-smi info`` takes a fraction of a second to a few seconds, so :class:`NpuSampler` runs it in a
background thread: each log step records the sample the previous request produced and starts the
next one, and the training step never waits for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from stages.train.npu_smi import NpuSmiError, parse_npu_smi_info, run_npu_smi

UTILIZATION_FLOOR = 70.0
TEMPERATURE_CEILING = 85.0

Sample = dict[str, Any]


class CpuSampler:
    """This process's CPU utilization since the previous sample (100 % = one core busy) and its resident memory."""

    kind = "cpu"

    def __init__(self) -> None:
        import psutil

        self._process = psutil.Process()
        self._process.cpu_percent(None)  # the first call only starts the interval
        self._cpu_count = psutil.cpu_count() or 1

    def sample(self) -> Sample:
        return {"kind": self.kind, "time": time.time(), "cpu_percent": self._process.cpu_percent(None),
                "rss_bytes": self._process.memory_info().rss, "cpu_count": self._cpu_count}

    def close(self) -> None:
        pass


def npu_sample(text: str) -> Sample:
    """A sample from the text of ``npu-smi info``."""
    info = parse_npu_smi_info(text)
    return {"kind": "npu", "time": time.time(), "driver_version": info.driver_version,
            "devices": [chip.as_dict() for chip in info.chips]}


class NpuSampler:
    """``npu-smi info`` in a background thread; :meth:`sample` returns the newest finished sample (None before the
    first) and asks for the next one. Nothing runs before the first call, so the first recorded sample (at
    2 × log_every) shows the cards while training, not while the graph was compiling."""

    kind = "npu"

    def __init__(self, runner: Callable[[], str] = run_npu_smi) -> None:
        self._runner = runner
        self._lock = threading.Lock()
        self._latest: Sample | None = None
        self._error: str | None = None
        self._thread: threading.Thread | None = None

    def _work(self) -> None:
        try:
            sample = npu_sample(self._runner())
            error = None
        except NpuSmiError as err:
            sample, error = None, str(err)
        with self._lock:
            if sample is not None:
                self._latest = sample
            self._error = error

    def _request(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._thread = threading.Thread(target=self._work, name="npu-smi", daemon=True)
        self._thread.start()

    def sample(self) -> Sample | None:
        with self._lock:
            latest, error = self._latest, self._error
        self._request()
        if latest is None and error is not None:
            return {"kind": self.kind, "time": time.time(), "error": error, "devices": []}
        return latest

    def close(self) -> None:
        if self._thread is not None:
            self._thread.join(timeout=30)


def sampler_for(target: str) -> CpuSampler | NpuSampler:
    """The sampler of a MindSpore device target (``Ascend`` or ``CPU``)."""
    return NpuSampler() if target == "Ascend" else CpuSampler()


def hardware_warnings(sample: Sample | None, *, utilization_floor: float = UTILIZATION_FLOOR,
                      temperature_ceiling: float = TEMPERATURE_CEILING) -> list[str]:
    """What in an NPU sample needs attention: utilization below the floor, temperature above the ceiling, a health
    other than OK, or npu-smi failing. CPU samples never warn."""
    if not sample or sample.get("kind") != "npu":
        return []
    if sample.get("error"):
        return [f"npu-smi: {sample['error']}"]
    warnings = []
    for chip in sample.get("devices", []):
        where = f"NPU {chip['npu']}" + (f" chip {chip['chip']}" if chip.get("chip") else "")
        util, temp = chip.get("aicore_percent"), chip.get("temp_c")
        if chip.get("health") not in (None, "OK"):
            warnings.append(f"{where} health is {chip['health']} (npu-smi info -t health -i {chip['npu']} says why)")
        if util is not None and util < utilization_floor:
            warnings.append(f"{where} AI Core utilization {util:.0f} % < {utilization_floor:.0f} % (input-bound, "
                            f"waiting on communication, or idle)")
        if temp is not None and temp > temperature_ceiling:
            warnings.append(f"{where} temperature {temp:.0f} °C > {temperature_ceiling:.0f} °C")
    return warnings


def scalars(sample: Sample | None) -> dict[str, float]:
    """The sample as TensorBoard scalars under ``hw/``."""
    if not sample:
        return {}
    if sample.get("kind") == "cpu":
        return {"hw/cpu_percent": float(sample["cpu_percent"]), "hw/rss_gib": sample["rss_bytes"] / 2**30}
    out: dict[str, float] = {}
    for chip in sample.get("devices", []):
        name = f"hw/npu{chip['npu']}" + (f"_chip{chip['chip']}" if chip.get("chip") else "")
        for key, tag in (("aicore_percent", "aicore_percent"), ("temp_c", "temp_c"), ("power_w", "power_w")):
            if chip.get(key) is not None:
                out[f"{name}/{tag}"] = float(chip[key])
        if chip.get("hbm_used_mb") is not None:
            out[f"{name}/hbm_used_gib"] = chip["hbm_used_mb"] / 1024
    return out
