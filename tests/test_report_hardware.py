"""`kiln report` plots the hardware samples of metrics.jsonl: NPUs (utilization, HBM, temperature, power) and CPU."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from kiln.report_train import read_hardware, train_section
from stages.train.hardware import npu_sample

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "npu_smi"


def step_line(step: int, hardware: dict | None = None) -> str:
    record = {"step": step, "loss": 5.0 - step / 100, "grad_norm": 1.5, "lr": 3e-4, "tokens_per_s": 2000.0,
              "step_time": 0.5, "data_wait_fraction": 0.01, "tflops": 100.0, "mfu": 0.4, "skipped": False}
    if hardware is not None:
        record["hardware"] = hardware
    return json.dumps(record)


def write_run(run_dir: Path, samples: dict[int, dict]) -> None:
    run_dir.mkdir(parents=True)
    lines = [step_line(step, samples.get(step)) for step in range(1, 41)]
    lines += [step_line(step, samples.get(step)) for step in range(31, 41)]  # a resume that redid steps 31-40
    (run_dir / "metrics.jsonl").write_text("\n".join(lines) + "\n")


def test_npu_samples_become_a_chart(tmp_path: Path) -> None:
    training = npu_sample((FIXTURES / "910b3_8npu_training.txt").read_text())
    degraded = npu_sample((FIXTURES / "910b2c_degraded_card.txt").read_text())
    write_run(tmp_path / "run", {10: training, 20: training, 30: degraded, 40: degraded})
    samples = read_hardware(tmp_path / "run" / "metrics.jsonl")
    assert [step for step, _ in samples] == [10, 20, 30, 40]  # the resumed 30 and 40 replace the first ones
    charts = tmp_path / "charts"
    charts.mkdir()
    html = train_section(tmp_path / "run", charts)
    assert 'src="train-hardware.png"' in html and "AI Core utilization" in html
    with Image.open(charts / "train-hardware.png") as image:
        assert image.size[0] > 800 and image.size[1] > 500


def test_cpu_samples_become_a_chart_and_no_samples_no_chart(tmp_path: Path) -> None:
    cpu = {"kind": "cpu", "time": 0.0, "cpu_percent": 180.0, "rss_bytes": 3 * 2**30, "cpu_count": 2}
    write_run(tmp_path / "cpu", {10: cpu, 20: cpu})
    charts = tmp_path / "charts"
    charts.mkdir()
    assert 'src="train-hardware.png"' in train_section(tmp_path / "cpu", charts)
    write_run(tmp_path / "none", {})
    other = tmp_path / "other"
    other.mkdir()
    assert "train-hardware" not in train_section(tmp_path / "none", other)
    assert not (other / "train-hardware.png").exists()
