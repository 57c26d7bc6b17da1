"""Training health (skips, loss spikes, grad-norm bands, state) and metrics (JSONL, FLOPs, MFU)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from common.errors import ConfigError, KilnError
from stages.train.config import HealthConfig, load_trainer_config
from stages.train.flops import PEAK_TFLOPS, cpu_features, cpu_peak_flops, mfu, model_flops_per_token, peak_flops
from stages.train.health import HealthMonitor, TrainingHealthError
from stages.train.metrics import MetricsWriter, StepMetrics

SPIKE = HealthConfig(spike_window=20, spike_min_history=10, spike_zscore=6.0, spike_patience=3)


def warm_up(monitor: HealthMonitor, steps: int, grad_norm: float = 2.0) -> int:
    """Feed steady, slightly noisy losses; return the next step number."""
    for step in range(steps):
        assert monitor.observe(step, 3.0 + 0.01 * (step % 3), grad_norm, True) == []
    return steps


def test_consecutive_skips_stop_with_clear_message() -> None:
    monitor = HealthMonitor(HealthConfig(max_consecutive_skips=3))
    for step in range(2):
        warnings = monitor.observe(step, math.nan, math.inf, False)
        assert len(warnings) == 1 and "skipped" in warnings[0]
    with pytest.raises(TrainingHealthError, match="3 consecutive steps were skipped") as caught:
        monitor.observe(2, math.nan, 1.0, False)
    assert isinstance(caught.value, KilnError)
    assert "not finite" in str(caught.value)
    assert monitor.skipped_total == 3


def test_finite_step_resets_consecutive_skips() -> None:
    monitor = HealthMonitor(HealthConfig(max_consecutive_skips=3))
    step = 0
    for _ in range(4):
        monitor.observe(step, math.inf, 1.0, False)
        monitor.observe(step + 1, math.nan, 1.0, False)
        assert monitor.observe(step + 2, 3.0, 2.0, True) == []
        assert monitor.consecutive_skips == 0
        step += 3
    assert monitor.skipped_total == 8


def test_non_finite_values_count_as_skipped_even_if_reported_applied() -> None:
    monitor = HealthMonitor()
    monitor.observe(0, math.nan, 1.0, True)
    assert monitor.skipped_total == 1


def test_lone_spike_warns_and_training_continues() -> None:
    monitor = HealthMonitor(SPIKE)
    step = warm_up(monitor, 15)
    warnings = monitor.observe(step, 30.0, 2.0, True)
    assert len(warnings) == 1 and "loss spike" in warnings[0]
    assert monitor.observe(step + 1, 3.0, 2.0, True) == []
    assert monitor.spike_streak == 0
    for offset in range(2, 12):  # spikes every other step never persist: each warns as the first of a streak
        warnings = monitor.observe(step + offset, 30.0 if offset % 2 == 0 else 3.01, 2.0, True)
        if offset % 2 == 0:
            assert len(warnings) == 1 and f"step {step + offset}: loss spike 30" in warnings[0], warnings
            assert "1/3 before stopping" in warnings[0] and monitor.spike_streak == 1
        else:
            assert warnings == [] and monitor.spike_streak == 0
    assert monitor.skipped_total == 0


def test_persisting_spike_stops() -> None:
    monitor = HealthMonitor(SPIKE)
    step = warm_up(monitor, 15)
    assert monitor.observe(step, 30.0, 2.0, True)
    assert monitor.observe(step + 1, 31.0, 2.0, True)
    with pytest.raises(TrainingHealthError, match="spiked for 3 consecutive steps"):
        monitor.observe(step + 2, 32.0, 2.0, True)


def test_no_spike_detection_before_enough_history() -> None:
    monitor = HealthMonitor(SPIKE)
    for step in range(SPIKE.spike_min_history):
        assert monitor.observe(step, 10.0 if step % 2 else 1.0, 2.0, True) == []


@pytest.mark.parametrize(("grad_norm", "advice"), [(0.1, "learning rate may be too small"),
                                                   (9.0, "consider more clipping")])
def test_band_warning_fires_once_per_window(grad_norm: float, advice: str) -> None:
    window = 10
    monitor = HealthMonitor(HealthConfig(band_window=window, spike_window=window, spike_min_history=window))
    fired = []
    for step in range(3 * window):
        warnings = monitor.observe(step, 3.0, grad_norm, True)
        fired += [(step, w) for w in warnings]
    assert [step for step, _ in fired] == [window - 1, 2 * window - 1, 3 * window - 1]
    assert all(advice in w for _, w in fired)


def test_healthy_band_is_silent() -> None:
    monitor = HealthMonitor(HealthConfig(band_window=10, spike_window=10, spike_min_history=10))
    for step in range(30):
        assert monitor.observe(step, 3.0, 0.6 if step % 2 else 4.5, True) == []


def test_band_uses_the_median() -> None:
    monitor = HealthMonitor(HealthConfig(band_window=10, spike_window=10, spike_min_history=10))
    for step in range(10):
        assert monitor.observe(step, 3.0, 100.0 if step == 0 else 2.0, True) == []


def test_state_round_trips_through_json() -> None:
    config = HealthConfig(band_window=10, spike_window=20, spike_min_history=10)
    monitor = HealthMonitor(config)
    for step in range(12):
        monitor.observe(step, 3.0 + 0.01 * (step % 3), 0.1, True)
    step = 12
    monitor.observe(step, math.nan, 1.0, False)
    monitor.observe(step + 1, 30.0, 0.1, True)
    restored = HealthMonitor(config)
    restored.load_state_dict(json.loads(json.dumps(monitor.state_dict())))
    assert restored.state_dict() == monitor.state_dict()
    assert restored.skipped_total == 1 and restored.consecutive_skips == 0 and restored.spike_streak == 1
    assert restored.last_band_warning_step == monitor.last_band_warning_step is not None
    assert monitor.observe(step + 2, 31.0, 0.1, True) == restored.observe(step + 2, 31.0, 0.1, True)
    with pytest.raises(TrainingHealthError):
        restored.observe(step + 3, 32.0, 0.1, True)


def test_invalid_config_is_refused() -> None:
    with pytest.raises(ConfigError, match="max_consecutive_skips"):
        load_trainer_config(None, ["health.max_consecutive_skips=0"])
    with pytest.raises(ConfigError, match="spike_min_history"):
        load_trainer_config(None, ["health.spike_window=5"])


def test_jsonl_has_one_valid_object_per_step(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "metrics.jsonl"
    with MetricsWriter(path) as writer:
        for step in range(3):
            writer.write(StepMetrics.measure(
                step=step, loss=math.nan if step == 1 else 3.0 - step, grad_norm=1.5, lr=1e-3, tokens=4096,
                step_time=0.5, data_wait=0.05, flops_per_token=1e6, peak_flops=1e12, skipped=step == 1))
            assert len(path.read_text().splitlines()) == step + 1
    with MetricsWriter(path) as writer:
        writer.write(StepMetrics(step=3, loss=1.0, grad_norm=1.0, lr=1e-3, tokens_per_s=1.0, step_time=1.0,
                                 data_wait_fraction=0.0, tflops=0.0, mfu=0.0, skipped=False))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["step"] for r in records] == [0, 1, 2, 3]
    assert set(records[0]) == {"step", "loss", "grad_norm", "lr", "tokens_per_s", "step_time",
                               "data_wait_fraction", "tflops", "mfu", "skipped"}
    assert records[1]["loss"] is None and records[1]["skipped"] is True
    assert records[0]["tokens_per_s"] == 8192.0
    assert records[0]["data_wait_fraction"] == pytest.approx(0.1)
    assert records[0]["tflops"] == pytest.approx(8192e6 / 1e12)
    assert records[0]["mfu"] == pytest.approx(8192e6 / 1e12)


def test_flops_per_token_worked_example() -> None:
    # 6 * 1_000_000 + 12 * 2 * 64 * 128 = 6_000_000 + 196_608
    assert model_flops_per_token(1_000_000, 2, 64, 128) == 6_196_608
    assert model_flops_per_token(10, 0, 64, 128) == 60


def test_mfu_arithmetic() -> None:
    assert cpu_peak_flops(2, ghz=2.5, flops_per_cycle=32) == 2 * 2.5e9 * 32 == 1.6e11
    assert mfu(1000.0, 6_196_608, cpu_peak_flops(2, 2.5, 32)) == pytest.approx(6.196608e9 / 1.6e11)
    avx512 = "processor\t: 0\ncpu MHz\t\t: 2596.130\nflags\t\t: fpu sse avx2 fma avx512f\n"
    assert cpu_features(avx512) == (pytest.approx(2.59613), 64)
    assert cpu_features("flags : sse avx2 fma\n") == (2.5, 32)
    assert cpu_features("") == (2.5, 16)
    assert peak_flops("H100-SXM") == PEAK_TFLOPS["h100-sxm"] * 1e12 == 989e12
    assert mfu(100_000.0, 4.945e9, peak_flops("h100-sxm")) == pytest.approx(0.5)
    assert PEAK_TFLOPS["ascend-910b1"] == 414.0 and PEAK_TFLOPS["ascend-910b4"] == 280.0
    with pytest.raises(ConfigError, match="unknown device"):
        peak_flops("tpu-v9")
