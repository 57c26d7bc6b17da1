"""The training section of `kiln report`: loss, gradient norm, learning rate, throughput and hardware of a run, as
PNG charts.

The hardware chart appears when metrics.jsonl carries hardware samples (the trainer writes one every
``log_every`` steps): per NPU its AI Core utilization, HBM in use, temperature and power on Ascend,
the trainer process's CPU utilization and resident memory on CPU."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import LogLocator, MaxNLocator, NullFormatter, PercentFormatter, StrMethodFormatter

from common.errors import KilnError
from kiln.html import escape, save_chart, table
from stages.train.metrics import (
    EVAL_NAME,
    HARDWARE_KEY,
    METRICS_NAME,
    RUN_NAME,
    TENSORBOARD_DIR,
    EvalMetrics,
    StepMetrics,
)

TRAIN_DIR = "train"
HEALTHY_GRAD_NORM = (1.0, 3.0)
SMOOTHING_POINTS = 50
TRAIN_COLOR, EVAL_COLOR, SKIP_COLOR = "#1f77b4", "#ff7f0e", "#d62728"


Series = dict[str, np.ndarray]
"""The records of a JSONL file as columns, one row per step; null values are NaN."""


def _check_record(record: object, names: list[str]) -> str | None:
    """What is wrong with one decoded line, or None."""
    if not isinstance(record, dict):
        return "expected a JSON object"
    missing = [name for name in names if name not in record]
    if missing:
        return f"missing keys {missing}"
    step = record["step"]
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        return f"step must be a non-negative integer, got {step!r}"
    for name in names:
        value = record[name]
        if value is not None and not isinstance(value, int | float):
            return f"{name} must be a number or null, got {value!r}"
    return None


def read_series(path: Path, record_type: type[StepMetrics] | type[EvalMetrics]) -> Series:
    """Read a JSONL file written by the trainer's MetricsWriter.

    After a resume the trainer redoes the steps since its checkpoint: a step number not above the
    previous line's starts over, replacing that step and dropping every later one logged before it.
    A last line that is cut short (no newline, not valid JSON) is a write in progress and is left out.
    """
    names = [f.name for f in fields(record_type)]
    kept: list[dict] = []
    lines = path.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            if number == len(lines):
                break
            raise KilnError(f"{path}, line {number}: not valid JSON ({err.msg})") from None
        problem = _check_record(record, names)
        if problem:
            raise KilnError(f"{path}, line {number}: {problem}")
        while kept and kept[-1]["step"] >= record["step"]:
            kept.pop()
        kept.append(record)
    return {name: np.array([np.nan if r[name] is None else float(r[name]) for r in kept]) for name in names}


def _read_json(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise KilnError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from None
    if not isinstance(value, dict):
        raise KilnError(f"{path}: expected a JSON object")
    return value


def _chart(fig: Figure, charts_dir: Path, name: str, alt: str) -> str:
    return save_chart(fig, charts_dir, f"train-{name}", alt)


def _axes(title: str, ylabel: str) -> tuple[Figure, Axes]:
    fig = Figure(figsize=(7.2, 3.4), layout="constrained")
    ax = fig.add_subplot()
    _label(ax, title, ylabel)
    return fig, ax


def _label(ax: Axes, title: str, ylabel: str) -> None:
    ax.set_title(title, fontsize=11)
    ax.set_ylabel(ylabel)
    ax.set_xlabel("step")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)


def moving_average(values: np.ndarray, half_window: int) -> np.ndarray:
    """Centred mean over 2·half_window + 1 points, the window narrowing symmetrically at both ends."""
    sums = np.concatenate(([0.0], np.cumsum(values)))
    i = np.arange(values.size)
    half = np.minimum(half_window, np.minimum(i, values.size - 1 - i))
    return (sums[i + half + 1] - sums[i - half]) / (2 * half + 1)


def _loss_chart(steps: Series, evals: Series | None, charts_dir: Path) -> str:
    fig, ax = _axes("train: loss", "loss (nats per token)")
    ax.plot(steps["step"], steps["loss"], color=TRAIN_COLOR, alpha=0.3, linewidth=0.8, label="train")
    finite = np.isfinite(steps["loss"])
    if finite.any():
        half = max(1, int(finite.sum()) // SMOOTHING_POINTS // 2)
        ax.plot(steps["step"][finite], moving_average(steps["loss"][finite], half), color=TRAIN_COLOR,
                linewidth=1.8, label=f"train, centred mean over {2 * half + 1} steps")
    if evals is not None and evals["step"].size:
        ax.plot(evals["step"], evals["val_loss"], "o-", color=EVAL_COLOR, markersize=4, linewidth=1.2,
                label="validation")
    ax.legend(fontsize=8)
    return _chart(fig, charts_dir, "loss", "training loss (raw and smoothed) and validation loss per step")


def _mark_skipped(ax: Axes, steps: Series) -> None:
    skipped = steps["step"][steps["skipped"] > 0]
    if skipped.size:
        ax.vlines(skipped, 0, 1, transform=ax.get_xaxis_transform(), colors=SKIP_COLOR, linewidth=1, alpha=0.6,
                  label=f"skipped step ({skipped.size:,})")


def _grad_norm_chart(steps: Series, charts_dir: Path) -> str:
    fig, ax = _axes("train: gradient norm before clipping", "global gradient norm (log scale)")
    low, high = HEALTHY_GRAD_NORM
    ax.axhspan(low, high, color="#2ca02c", alpha=0.12, label=f"healthy band {low:g}–{high:g}")
    norms = np.where(steps["grad_norm"] > 0, steps["grad_norm"], np.nan)
    ax.plot(steps["step"], norms, color=TRAIN_COLOR, linewidth=0.9, label="gradient norm")
    ax.set_yscale("log")
    shown = np.append(norms[np.isfinite(norms)], HEALTHY_GRAD_NORM)
    narrow = shown.max() / shown.min() <= 100
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 3.0, 5.0) if narrow else (1.0, 3.0)))
    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    _mark_skipped(ax, steps)
    ax.legend(fontsize=8)
    return _chart(fig, charts_dir, "grad-norm", "gradient norm per step with the healthy band and skipped steps")


def _lr_chart(steps: Series, charts_dir: Path) -> str:
    fig, ax = _axes("train: learning rate", "learning rate")
    ax.plot(steps["step"], steps["lr"], color=TRAIN_COLOR, linewidth=1.5)
    ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
    ax.set_ylim(bottom=0)
    return _chart(fig, charts_dir, "lr", "learning rate per step")


def _throughput_chart(steps: Series, charts_dir: Path) -> str:
    fig, ax = _axes("train: throughput and MFU", "tokens per second")
    rate = steps["tokens_per_s"]
    ax.plot(steps["step"], rate, color=TRAIN_COLOR, linewidth=0.9, label="tokens/s")
    median = float(np.nanmedian(rate))
    ax.axhline(median, color="black", linestyle="--", linewidth=1, label=f"median {median:,.0f} tokens/s")
    ax.set_ylim(bottom=0)
    ratios = (steps["mfu"] / rate)[rate > 0]
    ratio = float(np.nanmedian(ratios)) if ratios.size else np.nan
    if np.isfinite(ratio) and ratio > 0:
        mfu_axis = ax.secondary_yaxis("right", functions=(lambda t: t * ratio, lambda m: m / ratio))
        mfu_axis.set_ylabel("MFU")
        mfu_axis.yaxis.set_major_formatter(PercentFormatter(xmax=1))
    ax.legend(fontsize=8, loc="lower right")
    return _chart(fig, charts_dir, "throughput", "tokens per second and MFU per step")


def _step_time_chart(steps: Series, charts_dir: Path) -> str:
    fig = Figure(figsize=(7.2, 4.4), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    top.plot(steps["step"], steps["step_time"], color=TRAIN_COLOR, linewidth=0.9)
    top.set_yscale("log")
    _label(top, "train: step time and data wait", "step time (s, log scale)")
    top.set_xlabel("")
    bottom.plot(steps["step"], 100 * steps["data_wait_fraction"], color="#ff7f0e", linewidth=0.9)
    bottom.set_ylim(0, max(5.0, 1.15 * float(np.nanmax(100 * steps["data_wait_fraction"]))))
    _label(bottom, "", "waiting for data (%)")
    return _chart(fig, charts_dir, "step-time", "step time and the share of it spent waiting for data, per step")


def read_hardware(path: Path) -> list[tuple[int, dict]]:
    """(step, sample) for every line of metrics.jsonl that carries a hardware sample, with a resume's redone steps
    replacing the earlier ones as in :func:`read_series` (lines that do not parse are left to read_series)."""
    kept: list[tuple[int, dict | None]] = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        step = record.get("step") if isinstance(record, dict) else None
        if not isinstance(step, int):
            continue
        while kept and kept[-1][0] >= step:
            kept.pop()
        sample = record.get(HARDWARE_KEY)
        kept.append((step, sample if isinstance(sample, dict) else None))
    return [(step, sample) for step, sample in kept if sample is not None]


UTILIZATION_FLOOR, TEMPERATURE_CEILING = 70.0, 85.0


def _cpu_chart(samples: list[tuple[int, dict]], charts_dir: Path) -> str:
    fig = Figure(figsize=(7.2, 4.4), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    steps = [step for step, _ in samples]
    top.plot(steps, [s.get("cpu_percent", np.nan) for _, s in samples], "o-", color=TRAIN_COLOR, markersize=3)
    cores = max((s.get("cpu_count") or 0 for _, s in samples), default=0)
    if cores:
        top.axhline(100 * cores, color="black", linestyle="--", linewidth=1, label=f"{cores} cores busy")
        top.legend(fontsize=8)
    top.set_ylim(bottom=0)
    _label(top, "train: hardware (CPU): the trainer process", "CPU (%, 100 = one core)")
    top.set_xlabel("")
    bottom.plot(steps, [s.get("rss_bytes", np.nan) / 2**30 for _, s in samples], "o-", color="#9467bd", markersize=3)
    bottom.set_ylim(bottom=0)
    _label(bottom, "", "resident memory (GiB)")
    return _chart(fig, charts_dir, "hardware", "CPU utilization and resident memory of the trainer process per sample")


def _npu_chart(samples: list[tuple[int, dict]], charts_dir: Path) -> str:
    series: dict[str, dict[str, list[float]]] = {}
    steps: dict[str, list[int]] = {}
    for step, sample in samples:
        for chip in sample.get("devices", []):
            name = f"NPU {chip.get('npu')}" + (f"/{chip['chip']}" if chip.get("chip") else "")
            values = series.setdefault(name, {"aicore_percent": [], "hbm": [], "temp_c": [], "power_w": []})
            steps.setdefault(name, []).append(step)
            for key in ("aicore_percent", "temp_c", "power_w"):
                values[key].append(np.nan if chip.get(key) is None else float(chip[key]))
            values["hbm"].append(np.nan if chip.get("hbm_used_mb") is None else chip["hbm_used_mb"] / 1024)
    fig = Figure(figsize=(9.6, 6.0), layout="constrained")
    axes = fig.subplots(2, 2, sharex=True).ravel()
    panels = (("aicore_percent", "AI Core utilization (%)", UTILIZATION_FLOOR, "warns below"),
              ("hbm", "HBM in use (GiB)", None, ""),
              ("temp_c", "temperature (°C)", TEMPERATURE_CEILING, "warns above"),
              ("power_w", "power (W)", None, ""))
    for ax, (key, ylabel, line, meaning) in zip(axes, panels, strict=True):
        for name, values in series.items():
            ax.plot(steps[name], values[key], linewidth=1, marker="o", markersize=2, label=name)
        if line is not None:
            ax.axhline(line, color=SKIP_COLOR, linestyle="--", linewidth=1, label=f"{line:g} ({meaning})")
        _label(ax, "", ylabel)
        ax.set_ylim(bottom=0)
    axes[0].set_title("train: hardware (npu-smi info, this node's NPUs)", fontsize=11, loc="left")
    axes[0].legend(fontsize=7, ncol=2)
    return _chart(fig, charts_dir, "hardware", "AI Core utilization, HBM in use, temperature and power of each NPU per "
                                               "sample")


def _hardware_chart(samples: list[tuple[int, dict]], charts_dir: Path) -> str | None:
    if not samples:
        return None
    if any(s.get("kind") == "npu" and s.get("devices") for _, s in samples):
        return _npu_chart([(step, s) for step, s in samples if s.get("kind") == "npu"], charts_dir)
    cpu = [(step, s) for step, s in samples if s.get("kind") == "cpu"]
    return _cpu_chart(cpu, charts_dir) if cpu else None


def _last_finite(values: np.ndarray) -> int | None:
    finite = np.flatnonzero(np.isfinite(values))
    return int(finite[-1]) if finite.size else None


def _summary(steps: Series, evals: Series | None, run: dict) -> str:
    n = steps["step"].size
    total = run.get("total_steps")
    rows: list[list[object]] = [
        ["steps logged", f"{n:,}" + (f" of {total:,}" if isinstance(total, int) else "")],
        ["last step", f"{int(steps['step'][-1]):,}"],
    ]
    last = _last_finite(steps["loss"])
    if last is not None:
        lowest = int(np.nanargmin(steps["loss"]))
        rows += [["final train loss", f"{steps['loss'][last]:.4f} (step {int(steps['step'][last]):,})"],
                 ["min train loss", f"{steps['loss'][lowest]:.4f} (step {int(steps['step'][lowest]):,})"]]
    if evals is not None and _last_finite(evals["val_loss"]) is not None:
        for label, i in (("last", _last_finite(evals["val_loss"])), ("best", int(np.nanargmin(evals["val_loss"])))):
            rows += [[f"{label} validation loss", f"{evals['val_loss'][i]:.4f} (step {int(evals['step'][i]):,})"],
                     [f"{label} validation perplexity", f"{evals['val_perplexity'][i]:.2f}"]]
    skipped = int((steps["skipped"] > 0).sum())
    rows += [
        ["skipped steps", f"{skipped:,} ({100 * skipped / n:.2f} %)"],
        ["median tokens/s", f"{np.nanmedian(steps['tokens_per_s']):,.0f}"],
        ["median MFU", f"{100 * np.nanmedian(steps['mfu']):.3g} %"],
        ["median data wait", f"{100 * np.nanmedian(steps['data_wait_fraction']):.1f} %"],
    ]
    if isinstance(run.get("parameters"), int):
        rows.append(["parameters", f"{run['parameters']:,} ({run['parameters'] / 1e6:.1f} M)"])
    return table(["", "value"], rows, numeric={1})


def _run_facts(run_dir: Path, run: dict) -> str:
    facts = [f"run directory {run_dir.resolve()}"]
    if "device" in run:
        facts.append(f"device {run['device']}")
    if "world_size" in run:
        facts.append(f"{run['world_size']} process(es)")
    if "global_batch" in run and "seq_len" in run:
        facts.append(f"global batch {run['global_batch']} × {run['seq_len']} tokens")
    if (run_dir / TENSORBOARD_DIR).is_dir():
        facts.append(f"tensorboard --logdir {run_dir / TENSORBOARD_DIR}")
    return f'<p class="meta">{escape(" · ".join(facts))}</p>'


def train_section(run_dir: Path, charts_dir: Path) -> str:
    """The report's ``train`` section for ``run_dir``, its charts saved in ``charts_dir`` (the page's folder).

    Empty when the run has no ``metrics.jsonl`` or no step in it yet.
    """
    run_dir = Path(run_dir)
    metrics = run_dir / METRICS_NAME
    if not metrics.exists():
        return ""
    steps = read_series(metrics, StepMetrics)
    if not steps["step"].size:
        return ""
    evals = read_series(run_dir / EVAL_NAME, EvalMetrics) if (run_dir / EVAL_NAME).exists() else None
    run = _read_json(run_dir / RUN_NAME)
    charts = [_loss_chart(steps, evals, charts_dir), _grad_norm_chart(steps, charts_dir), _lr_chart(steps, charts_dir),
              _throughput_chart(steps, charts_dir), _step_time_chart(steps, charts_dir)]
    hardware = _hardware_chart(read_hardware(metrics), charts_dir)
    if hardware:
        charts.append(hardware)
    return (f'<section id="{TRAIN_DIR}"><h2>{TRAIN_DIR}</h2>{_run_facts(run_dir, run)}{_summary(steps, evals, run)}'
            f'<div class="grid">{"".join(charts)}</div></section>')
