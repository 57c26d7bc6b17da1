"""npu-smi info parsing on sample tables (a degraded card included), the hardware samplers and their warnings, and the
hardware key of metrics.jsonl and TensorBoard."""

from __future__ import annotations

import json
import stat
import struct
import threading
import time
from pathlib import Path

import pytest

from stages.train.hardware import CpuSampler, NpuSampler, hardware_warnings, npu_sample, scalars
from stages.train.npu_smi import NpuSmiError, parse_npu_smi_info, run_npu_smi

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "npu_smi"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_training_node_of_eight_910b3() -> None:
    info = parse_npu_smi_info(fixture("910b3_8npu_training.txt"))
    assert (info.tool_version, info.driver_version) == ("24.1.rc1", "24.1.rc1")
    assert [c.npu for c in info.chips] == list(range(8)) and {c.chip for c in info.chips} == {0}
    first = info.chips[0]
    assert (first.name, first.health, first.power_w, first.temp_c) == ("910B3", "OK", 356.2, 54.0)
    assert (first.aicore_percent, first.hbm_used_mb, first.hbm_total_mb) == (93.0, 58712.0, 65536.0)
    assert (first.memory_used_mb, first.memory_total_mb, first.bus_id) == (0.0, 0.0, "0000:C1:00.0")
    assert [c.aicore_percent for c in info.chips] == [93, 91, 94, 90, 92, 93, 89, 95]
    assert all(c.healthy for c in info.chips)
    assert hardware_warnings(npu_sample(fixture("910b3_8npu_training.txt"))) == []


def test_degraded_card_is_parsed_and_warned_about() -> None:
    info = parse_npu_smi_info(fixture("910b2c_degraded_card.txt"))
    assert info.driver_version == "23.0.2.1" and len(info.chips) == 8
    alarm, warning = info.chips[3], info.chips[5]
    assert (alarm.health, alarm.temp_c, alarm.aicore_percent, alarm.power_w) == ("Alarm", 92.0, 12.0, 412.6)
    assert (warning.health, warning.power_w, warning.aicore_percent, warning.temp_c) == ("Warning", None, None, 71.0)
    assert info.chips[0].hbm_used_mb == 59356.0 and info.chips[0].hbm_total_mb == 65536.0  # "59356/ 65536"
    assert [c.npu for c in info.chips if not c.healthy] == [3, 5]
    warnings = hardware_warnings(npu_sample(fixture("910b2c_degraded_card.txt")))
    assert any("NPU 3 health is Alarm" in w for w in warnings)
    assert any("NPU 3 AI Core utilization 12 % < 70 %" in w for w in warnings)
    assert any("NPU 3 temperature 92 °C > 85 °C" in w for w in warnings)
    assert any("NPU 5 health is Warning" in w for w in warnings)
    assert not any(w.startswith(("NPU 0 ", "NPU 1 ", "NPU 2 ", "NPU 4 ", "NPU 6 ", "NPU 7 ")) for w in warnings)
    assert len(warnings) == 4


def test_idle_cards_warn_about_utilization_only() -> None:
    info = parse_npu_smi_info(fixture("910b1_idle_4npu.txt"))
    assert [c.name for c in info.chips] == ["910B1"] * 4 and info.driver_version == "24.1.0"
    assert [c.hbm_used_mb for c in info.chips] == [3437, 3378, 3376, 3380]
    warnings = hardware_warnings(npu_sample(fixture("910b1_idle_4npu.txt")))
    assert len(warnings) == 4 and all("AI Core utilization 0 % < 70 %" in w for w in warnings)


def test_two_chips_per_npu() -> None:
    info = parse_npu_smi_info(fixture("a3_two_chips_per_npu.txt"))
    assert [(c.npu, c.chip) for c in info.chips] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [c.power_w for c in info.chips] == [352.8, None, 361.2, None]
    assert [c.hbm_used_mb for c in info.chips] == [61133, 60876, 61116, 60568]
    tags = scalars(npu_sample(fixture("a3_two_chips_per_npu.txt")))
    assert tags["hw/npu0/aicore_percent"] == 91 and tags["hw/npu0_chip1/aicore_percent"] == 90
    assert "hw/npu0_chip1/power_w" not in tags and tags["hw/npu1/hbm_used_gib"] == pytest.approx(61116 / 1024)


def test_output_without_a_table_is_an_error() -> None:
    with pytest.raises(NpuSmiError, match="no NPU table"):
        parse_npu_smi_info(fixture("dcmi_failure.txt"))
    with pytest.raises(NpuSmiError):
        parse_npu_smi_info("")


def fake_npu_smi(tmp_path: Path, body: str) -> str:
    script = tmp_path / "npu-smi"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_run_npu_smi_reads_the_tool_and_reports_its_failures(tmp_path: Path) -> None:
    good = fake_npu_smi(tmp_path, f'[ "$1" = info ] || exit 3\ncat "{FIXTURES / "910b3_8npu_training.txt"}"\n')
    assert len(parse_npu_smi_info(run_npu_smi(executable=good)).chips) == 8
    failing = fake_npu_smi(tmp_path, f'cat "{FIXTURES / "dcmi_failure.txt"}"\nexit 255\n')
    with pytest.raises(NpuSmiError, match="exited with status 255: dcmi model initialized failed"):
        run_npu_smi(executable=failing)
    hanging = fake_npu_smi(tmp_path, "sleep 5\n")
    with pytest.raises(NpuSmiError, match="did not answer within 0.5 s"):
        run_npu_smi(timeout=0.5, executable=hanging)


def test_npu_sampler_never_waits_for_npu_smi() -> None:
    release = threading.Event()
    calls = []

    def slow() -> str:
        calls.append(time.monotonic())
        release.wait(10)
        return fixture("910b3_8npu_training.txt")

    sampler = NpuSampler(runner=slow)
    assert calls == []  # nothing runs before the first log step
    began = time.monotonic()
    assert sampler.sample() is None  # starts the first run and returns at once
    assert sampler.sample() is None  # still running: no second run
    assert time.monotonic() - began < 0.5 and len(calls) == 1
    release.set()
    sampler._thread.join(5)
    sample = sampler.sample()  # the finished one, and the next run starts
    assert sample["kind"] == "npu" and len(sample["devices"]) == 8
    sampler.close()
    assert len(calls) == 2


def test_npu_sampler_reports_a_failing_tool() -> None:
    def broken() -> str:
        raise NpuSmiError("npu-smi is not on PATH")

    sampler = NpuSampler(runner=broken)
    assert sampler.sample() is None
    sampler._thread.join(5)
    sample = sampler.sample()
    assert sample["error"] == "npu-smi is not on PATH"
    assert hardware_warnings(sample) == ["npu-smi: npu-smi is not on PATH"]
    sampler.close()


def test_cpu_sampler_records_the_process() -> None:
    sampler = CpuSampler()
    sum(i * i for i in range(200_000))
    sample = sampler.sample()
    assert sample["kind"] == "cpu" and sample["cpu_percent"] >= 0 and sample["rss_bytes"] > 10 * 2**20
    assert hardware_warnings(sample) == []
    assert set(scalars(sample)) == {"hw/cpu_percent", "hw/rss_gib"}


def read_events(path: Path) -> list:
    """The events of a TFRecord event file (length, its CRC, payload, its CRC)."""
    from tensorboardX.proto.event_pb2 import Event

    data, events, at = path.read_bytes(), [], 0
    while at < len(data):
        (length,) = struct.unpack("<Q", data[at:at + 8])
        events.append(Event.FromString(data[at + 12:at + 12 + length]))
        at += 12 + length + 4
    return events


def test_metrics_line_and_tensorboard_carry_the_sample(tmp_path: Path) -> None:
    from stages.train.metrics import RunMetrics, StepMetrics

    def record(step: int) -> StepMetrics:
        return StepMetrics.measure(step=step, loss=2.0, grad_norm=1.0, lr=1e-3, tokens=100, step_time=0.1,
                                   data_wait=0.01, flops_per_token=1e6, peak_flops=1e12, skipped=False)

    sample = npu_sample(fixture("910b2c_degraded_card.txt"))
    with RunMetrics(tmp_path) as metrics:
        metrics.step(record(1))
        metrics.step(record(2), sample)
    lines = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert "hardware" not in lines[0]
    assert lines[1]["hardware"]["kind"] == "npu" and lines[1]["hardware"]["devices"][5]["power_w"] is None
    assert lines[1]["hardware"]["devices"][3]["temp_c"] == 92.0
    tags = {}
    for path in (tmp_path / "tensorboard").iterdir():
        for event in read_events(path):
            for value in event.summary.value:
                tags[(value.tag, event.step)] = value.simple_value
    assert tags[("hw/npu3/temp_c", 2)] == 92.0 and tags[("hw/npu3/aicore_percent", 2)] == 12.0
    assert ("hw/npu5/power_w", 2) not in tags and ("train/loss", 1) in tags
