"""The ablation section of `kiln report`: the arms' table, held-out curves and final bits per byte with intervals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from kiln.ablation.layout import ABLATION_DIR, SUMMARY_FILE
from kiln.ablation.results import BASELINE
from kiln.html import escape, save_chart, table

COLORS = ("#8c8c8c", "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#17becf", "#bcbd22")


def _curves_chart(arms: list[dict], out_dir: Path) -> str:
    fig = Figure(figsize=(7.2, 4.0), layout="constrained")
    ax = fig.add_subplot()
    for row, color in zip(arms, COLORS * 4, strict=False):
        steps = [p["step"] for p in row["curve"]]
        ax.plot(steps, [p["mean"] for p in row["curve"]], marker="o", markersize=3, color=color, label=row["name"])
        ax.fill_between(steps, [p["low"] for p in row["curve"]], [p["high"] for p in row["curve"]], color=color,
                        alpha=0.15, linewidth=0)
    ax.set_xlabel("training step")
    ax.set_ylabel("held-out bits per byte")
    ax.set_title("held-out bits per byte per arm (mean over seeds; band: lowest to highest)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9)
    return save_chart(fig, out_dir, "ablation-curves", "held-out bits per byte over training steps, one line per arm")


def _final_chart(arms: list[dict], out_dir: Path) -> str:
    fig = Figure(figsize=(7.2, 3.4), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(arms))
    means = [row["heldout"]["mean"] for row in arms]
    ax.errorbar(x, means, yerr=[row["heldout"]["ci95"] for row in arms], fmt="o", capsize=6, color="#1f3b73")
    for i, row in enumerate(arms):
        ax.scatter([i] * len(row["heldout"]["per_seed"]), row["heldout"]["per_seed"], s=12, color="#9aa5b1", zorder=3)
    ax.set_xticks(x, [row["name"] for row in arms])
    ax.set_ylabel("held-out bits per byte")
    ax.set_title("final held-out bits per byte (lower is better): mean, 95 % interval, seeds")
    ax.grid(axis="y", alpha=0.3)
    return save_chart(fig, out_dir, "ablation-final", "final held-out bits per byte per arm with 95 % intervals")


def _cell(stat: dict | None, signed: bool = False) -> str:
    if not stat:
        return "n/a"
    return f"{stat['mean']:+.4f} ± {stat['ci95']:.4f}" if signed else f"{stat['mean']:.4f} ± {stat['ci95']:.4f}"


def ablation_section(data_dir: Path, out_dir: Path) -> str:
    """The report's ``ablation`` section, or "" when DATA_DIR/ablation holds no summary.json."""
    path = Path(data_dir) / ABLATION_DIR / SUMMARY_FILE
    if not path.is_file():
        return ""
    summary = json.loads(path.read_text())
    arms, setup = summary["arms"], summary["setup"]
    with_mc = any("multiple_choice_accuracy" in row for row in arms)
    rows = [[row["name"], row["stage"], f"{row['documents']:,}", f"{row['tokens']:,}", _cell(row["heldout"]),
             "" if row["name"] == BASELINE else _cell(row["delta_vs_raw"], signed=True),
             f"{row['heldout']['loss_per_token']:.4f}", _cell(row.get("validation"))]
            + ([_cell(row.get("multiple_choice_accuracy"))] if with_mc else []) for row in arms]
    sets = "; ".join(f"{escape(name)}: {escape(s['origin'])}, {s['bytes']:,} bytes in {s['tokens']:,} predicted tokens"
                     for name, s in summary["eval_sets"].items())
    notes = "".join(f"<li>{escape(n)}</li>" for n in summary["notes"]) or \
        "<li>No two arms' held-out intervals overlap.</li>"
    return (f'<section id="ablation"><h2>ablation</h2>'
            f"<p>The same model ({setup['steps']} steps of {setup['global_batch']} × {setup['seq_len']} tokens, "
            f"{setup['tokens_per_run']:,} tokens per run, seeds {escape(setup['seeds'])}, one tokenizer of "
            f"{setup['tokenizer']['vocab_size']:,} ids) trained on each arm's data. Evaluation sets, removed with "
            f"their near-duplicates from every arm: {sets}.</p>"
            + table(["arm", "stage", "documents", "tokens", "held-out bits/byte (95 %)", "delta vs raw (paired)",
                     "held-out loss/token", "validation bits/byte"] + (["multiple-choice accuracy"] if with_mc else []),
                    rows, numeric={2, 3, 4, 5, 6, 7, 8})
            + f"<ul>{notes}</ul>"
            + f'<div class="grid">{_curves_chart(arms, out_dir)}{_final_chart(arms, out_dir)}</div></section>')
