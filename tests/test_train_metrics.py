"""Training metrics as a user reads them back: JSONL lines and TensorBoard event files."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest
from tensorboardX.proto.event_pb2 import Event, SessionLog
from tensorboardX.record_writer import masked_crc32c

from stages.train.metrics import (
    EVAL_NAME,
    METRICS_NAME,
    TENSORBOARD_DIR,
    EvalMetrics,
    MetricsWriter,
    RunMetrics,
    StepMetrics,
    TensorBoardWriter,
)


def step_metrics(step: int, loss: float = 3.0, grad_norm: float = 1.5, skipped: bool = False) -> StepMetrics:
    return StepMetrics.measure(step=step, loss=loss, grad_norm=grad_norm, lr=1e-3 * (step + 1), tokens=4096,
                               step_time=0.5, data_wait=0.1, flops_per_token=1e6, peak_flops=1e12, skipped=skipped)


def event_files(log_dir: Path) -> list[Path]:
    return sorted(log_dir.glob("events.out.tfevents.*"))


def read_events(path: Path) -> list[Event]:
    """The events of one event file, checking the TFRecord framing and its CRCs."""
    data = path.read_bytes()
    events = []
    offset = 0
    while offset < len(data):
        header = data[offset:offset + 8]
        (length,) = struct.unpack("<Q", header)
        assert struct.unpack("<I", data[offset + 8:offset + 12])[0] == masked_crc32c(header)
        payload = data[offset + 12:offset + 12 + length]
        assert struct.unpack("<I", data[offset + 12 + length:offset + 16 + length])[0] == masked_crc32c(payload)
        events.append(Event.FromString(payload))
        offset += 16 + length
    return events


def scalars(events: list[Event]) -> dict[str, dict[int, float]]:
    """Tag -> {step: value}, as TensorBoard's scalar dashboard shows them."""
    found: dict[str, dict[int, float]] = {}
    for event in events:
        for value in event.summary.value:
            found.setdefault(value.tag, {})[event.step] = value.simple_value
    return found


def test_run_metrics_write_jsonl_and_tensorboard(tmp_path: Path) -> None:
    with RunMetrics(tmp_path) as metrics:
        metrics.step(step_metrics(0, loss=4.0))
        metrics.step(step_metrics(1, loss=math.nan, grad_norm=math.inf, skipped=True))
        metrics.step(step_metrics(2, loss=3.5))
        metrics.eval(3, 3.25, math.exp(3.25), 8192)

    (path,) = event_files(tmp_path / TENSORBOARD_DIR)
    got = scalars(read_events(path))
    assert set(got) == {"train/loss", "train/grad_norm", "train/lr", "perf/tokens_per_s", "perf/step_time",
                        "perf/data_wait_fraction", "perf/tflops", "perf/mfu", "health/skipped",
                        "eval/loss", "eval/perplexity"}
    assert got["train/loss"] == {0: 4.0, 2: 3.5}
    assert got["train/grad_norm"] == {0: 1.5, 2: 1.5}
    assert got["health/skipped"] == {0: 0.0, 1: 1.0, 2: 0.0}
    assert got["train/lr"][1] == pytest.approx(2e-3)
    assert got["perf/tokens_per_s"] == {0: 8192.0, 1: 8192.0, 2: 8192.0}
    assert got["perf/data_wait_fraction"][0] == pytest.approx(0.2)
    assert got["perf/mfu"][0] == pytest.approx(8192 * 1e6 / 1e12)
    assert got["perf/tflops"][0] == pytest.approx(8192 * 1e6 / 1e12)
    assert got["eval/loss"] == {3: 3.25}
    assert got["eval/perplexity"][3] == pytest.approx(math.exp(3.25), rel=1e-6)

    steps = [json.loads(line) for line in (tmp_path / METRICS_NAME).read_text().splitlines()]
    assert [(s["step"], s["loss"], s["grad_norm"], s["skipped"]) for s in steps] == [
        (0, 4.0, 1.5, False), (1, None, None, True), (2, 3.5, 1.5, False)]
    evals = [json.loads(line) for line in (tmp_path / EVAL_NAME).read_text().splitlines()]
    assert evals == [{"step": 3, "val_loss": 3.25, "val_perplexity": pytest.approx(math.exp(3.25)),
                      "val_tokens": 8192}]


def test_resumed_writer_asks_tensorboard_to_purge_redone_steps(tmp_path: Path) -> None:
    with TensorBoardWriter(tmp_path) as writer:
        for step in range(4):
            writer.write_step(step_metrics(step, loss=5.0))
    with TensorBoardWriter(tmp_path, purge_step=2) as writer:
        for step in range(2, 4):
            writer.write_step(step_metrics(step, loss=4.0))
    first, resumed = (read_events(path) for path in event_files(tmp_path / TENSORBOARD_DIR))
    assert scalars(first)["train/loss"] == {0: 5.0, 1: 5.0, 2: 5.0, 3: 5.0}
    starts = [e.step for e in resumed if e.HasField("session_log") and e.session_log.status == SessionLog.START]
    assert starts == [2]
    assert scalars(resumed)["train/loss"] == {2: 4.0, 3: 4.0}


def test_non_finite_eval_values_are_left_out(tmp_path: Path) -> None:
    with TensorBoardWriter(tmp_path) as writer:
        writer.write_eval(5, 1000.0, math.inf)
        writer.write_eval(6, math.nan, math.nan)
    (path,) = event_files(tmp_path / TENSORBOARD_DIR)
    assert scalars(read_events(path)) == {"eval/loss": {5: 1000.0}}
    path = tmp_path / EVAL_NAME
    with MetricsWriter(path) as writer:
        writer.write(EvalMetrics(step=5, val_loss=1000.0, val_perplexity=math.inf, val_tokens=10))
    assert json.loads(path.read_text()) == {"step": 5, "val_loss": 1000.0, "val_perplexity": None, "val_tokens": 10}


def test_writer_cuts_a_line_left_unfinished_by_a_crash(tmp_path: Path) -> None:
    path = tmp_path / METRICS_NAME
    with MetricsWriter(path) as writer:
        writer.write(step_metrics(0))
    with path.open("a", encoding="utf-8") as file:
        file.write('{"step": 1, "lo')
    with MetricsWriter(path) as writer:
        writer.write(step_metrics(1))
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == [0, 1]
