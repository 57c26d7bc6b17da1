"""Training metrics: per-step and eval records, written as JSONL and TensorBoard events."""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType

from stages.train.flops import mfu

METRICS_NAME = "metrics.jsonl"
EVAL_NAME = "eval.jsonl"
TENSORBOARD_DIR = "tensorboard"
RUN_NAME = "run.json"
"""File names inside a run directory (``DATA_DIR/train`` by default)."""
HARDWARE_KEY = "hardware"
"""The key of a metrics.jsonl line that carries the hardware sample taken at that step (every log_every steps)."""


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


@dataclass(frozen=True)
class EvalMetrics:
    """One line of ``eval.jsonl``: a validation pass at ``step``."""

    step: int
    val_loss: float
    val_perplexity: float
    val_tokens: int


def _json_value(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _clean(value: object) -> object:
    """Non-finite floats anywhere inside ``value`` as None (valid JSON)."""
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(item) for item in value]
    return _json_value(value)


class MetricsWriter:
    """Appends one JSON object per record (a step or an evaluation) to a JSONL file, flushed after every line.

    Non-finite numbers (a skipped step's NaN loss) are written as ``null`` so every line is valid JSON. An
    unterminated last line, left by a crash in mid-write, is cut off before appending.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _drop_partial_line(self.path)
        self._file = self.path.open("a", encoding="utf-8")

    def write(self, record: StepMetrics | EvalMetrics, extra: dict[str, object] | None = None) -> None:
        """Append ``record`` (and the keys of ``extra``, e.g. a hardware sample) as one line and flush it."""
        values = {key: _json_value(value) for key, value in asdict(record).items()}
        if extra:
            values.update({key: _clean(value) for key, value in extra.items()})
        self._file.write(json.dumps(values, allow_nan=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file; further writes fail."""
        self._file.close()

    def __enter__(self) -> MetricsWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _drop_partial_line(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as file:
        file.seek(-1, 2)
        if file.read(1) == b"\n":
            return
        file.seek(0)
        file.truncate(file.read().rfind(b"\n") + 1)


STEP_TAGS: dict[str, str] = {
    "loss": "train/loss",
    "grad_norm": "train/grad_norm",
    "lr": "train/lr",
    "tokens_per_s": "perf/tokens_per_s",
    "step_time": "perf/step_time",
    "data_wait_fraction": "perf/data_wait_fraction",
    "tflops": "perf/tflops",
    "mfu": "perf/mfu",
    "skipped": "health/skipped",
}
"""StepMetrics field -> TensorBoard scalar tag."""


class TensorBoardWriter:
    """Scalars of every step and evaluation as TensorBoard event files under ``<run_dir>/tensorboard``.

    Non-finite values are left out, so a skipped step leaves a gap instead of a spike to infinity.
    ``purge_step`` (the first step a resumed run will redo) hides the events a crashed run wrote
    from that step on. Each writer opens a new event file, named with the process id and the time
    in nanoseconds so that a restart within the same second does not overwrite the previous one.
    """

    def __init__(self, run_dir: str | Path, purge_step: int | None = None, flush_secs: int = 30) -> None:
        from tensorboardX import SummaryWriter

        self.log_dir = Path(run_dir) / TENSORBOARD_DIR
        self._writer = SummaryWriter(logdir=str(self.log_dir), purge_step=purge_step, flush_secs=flush_secs,
                                     filename_suffix=f".{os.getpid()}.{time.time_ns()}")

    def _scalars(self, step: int, values: dict[str, float]) -> None:
        for tag, value in values.items():
            if math.isfinite(value):
                self._writer.add_scalar(tag, value, step)

    def write_step(self, metrics: StepMetrics) -> None:
        """Queue the step's scalars (``health/skipped`` is 1 for a skipped update, else 0)."""
        self._scalars(metrics.step, {tag: float(getattr(metrics, name)) for name, tag in STEP_TAGS.items()})

    def write_scalars(self, step: int, values: dict[str, float]) -> None:
        """Queue arbitrary scalars (a hardware sample's ``hw/...``) at ``step``."""
        self._scalars(step, values)

    def write_eval(self, step: int, val_loss: float, val_perplexity: float) -> None:
        """Write a validation pass's loss and perplexity and flush, so they show up at once."""
        self._scalars(step, {"eval/loss": val_loss, "eval/perplexity": val_perplexity})
        self.flush()

    def flush(self) -> None:
        """Write queued events to disk."""
        self._writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        self._writer.close()

    def __enter__(self) -> TensorBoardWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class RunMetrics:
    """What the training loop logs to a run directory: ``metrics.jsonl``, ``eval.jsonl`` and TensorBoard events."""

    def __init__(self, run_dir: str | Path, purge_step: int | None = None) -> None:
        run_dir = Path(run_dir)
        self._steps = MetricsWriter(run_dir / METRICS_NAME)
        self._evals = MetricsWriter(run_dir / EVAL_NAME)
        self._tensorboard = TensorBoardWriter(run_dir, purge_step)

    def step(self, metrics: StepMetrics, hardware: dict[str, object] | None = None) -> None:
        """Log one training step, with the hardware sample taken at it (:mod:`stages.train.hardware`) if any: the
        JSONL line gets a ``"hardware"`` key and TensorBoard its ``hw/`` scalars."""
        self._steps.write(metrics, {HARDWARE_KEY: hardware} if hardware else None)
        self._tensorboard.write_step(metrics)
        if hardware:
            from stages.train.hardware import scalars

            self._tensorboard.write_scalars(metrics.step, scalars(hardware))

    def eval(self, step: int, val_loss: float, val_perplexity: float, val_tokens: int) -> None:
        """Log one validation pass."""
        self._evals.write(EvalMetrics(step, val_loss, val_perplexity, val_tokens))
        self._tensorboard.write_eval(step, val_loss, val_perplexity)

    def close(self) -> None:
        """Close every file."""
        self._steps.close()
        self._evals.close()
        self._tensorboard.close()

    def __enter__(self) -> RunMetrics:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
