"""From the runs' losses to the ablation's answer: bits per byte per arm over seeds, 95 % intervals, deltas
against ``raw``, which differences the seeds resolve, and summary.json."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kiln.ablation.layout import ABLATION_DIR, ARM_FILE, RESULT_FILE, SUMMARY_FILE

if TYPE_CHECKING:
    from kiln.ablation.arms import Arm  # arms reads stage outputs (pyarrow): kiln status does not need it


BASELINE = "raw"
# Student's t, two-sided 95 %, by degrees of freedom (above 30: the normal's 1.96)
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
         20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
         29: 2.045, 30: 2.042}


def bits_per_byte(loss: float, tokens: int, text_bytes: int) -> float:
    """Mean loss per token (nats) over ``tokens`` predicted tokens standing for ``text_bytes`` bytes, in bits per
    byte: independent of how the text was cut into tokens."""
    return loss * tokens / (math.log(2) * text_bytes)


def interval(values: Sequence[float]) -> tuple[float, float]:
    """(mean, half-width of its 95 % Student-t interval); the half-width is nan for a single value."""
    data = np.asarray(values, dtype=np.float64)
    if data.size < 2:
        return float(data.mean()), math.nan
    half = T_975.get(data.size - 1, 1.96) * data.std(ddof=1) / math.sqrt(data.size)
    return float(data.mean()), float(half)


def _stat(values: Sequence[float]) -> dict:
    mean, half = interval(values)
    return {"mean": mean, "ci95": half, "low": mean - half, "high": mean + half, "per_seed": list(values)}


def overlap(a: dict, b: dict) -> bool:
    """Whether two arms' 95 % intervals overlap."""
    return a["low"] <= b["high"] and b["low"] <= a["high"]


def summarize(arms: dict[str, Arm], results: list[dict], eval_sets: dict[str, dict], setup: dict) -> dict:
    """summary.json: per arm its data, bits per byte on each evaluation set over seeds, its paired delta
    against raw, the curves, and a plain note for every pair of arms whose intervals overlap."""
    per_arm: dict[str, list[dict]] = {}
    for result in results:
        per_arm.setdefault(result["arm"], []).append(result)
    heldout = eval_sets["heldout"]
    rows, stats = [], {}
    for name, arm in arms.items():
        runs = sorted(per_arm.get(name, []), key=lambda r: r["seed"])
        row: dict = {**asdict(arm), "seeds": [r["seed"] for r in runs]}
        row["heldout"] = _stat([bits_per_byte(r["heldout_loss"], heldout["tokens"], heldout["bytes"]) for r in runs])
        row["heldout"]["loss_per_token"] = interval([r["heldout_loss"] for r in runs])[0]
        if "validation" in eval_sets and all(r["validation_loss"] is not None for r in runs):
            val = eval_sets["validation"]
            row["validation"] = _stat([bits_per_byte(r["validation_loss"], val["tokens"], val["bytes"]) for r in runs])
            row["validation"]["loss_per_token"] = interval([r["validation_loss"] for r in runs])[0]
        if all(r["multiple_choice"] for r in runs):
            row["multiple_choice_accuracy"] = _stat([r["multiple_choice"]["accuracy"] for r in runs])
        row["curve"] = _mean_curve(runs, heldout)
        stats[name] = row
        rows.append(row)
    base = stats[BASELINE]
    for row in rows:
        paired = [a - b for a, b in zip(row["heldout"]["per_seed"], base["heldout"]["per_seed"], strict=True)]
        row["delta_vs_raw"] = _stat(paired) | {"overlaps_raw": overlap(row["heldout"], base["heldout"])}
    notes = [_overlap_note(a, b) for a, b in itertools.combinations(rows, 2) if overlap(a["heldout"], b["heldout"])]
    return {"metric": "bits per byte on the held-out set (nats per token x predicted tokens / (ln 2 x their UTF-8 "
                      "bytes)); loss per token beside it; 95 % Student-t intervals over seeds",
            "setup": setup, "eval_sets": eval_sets, "arms": rows, "notes": notes}


def _overlap_note(a: dict, b: dict) -> str:
    """Two arms whose intervals overlap, said plainly; against raw, whether the paired difference is resolved."""
    note = (f"{a['name']} and {b['name']}: their held-out 95 % intervals overlap ({a['heldout']['mean']:.4f} vs "
            f"{b['heldout']['mean']:.4f} bits/byte)")
    if a["name"] != BASELINE:
        return note + ", so the seeds do not resolve the difference"
    delta = b["delta_vs_raw"]
    if delta["low"] > 0 or delta["high"] < 0:
        return note + (f"; paired by seed, {b['name']} is {abs(delta['mean']):.4f} ± {delta['ci95']:.4f} bits/byte "
                       f"{'lower' if delta['mean'] < 0 else 'higher'}: that interval excludes 0, so the paired "
                       "difference is resolved")
    return note + "; the paired difference's interval includes 0 too: not resolved"


def _mean_curve(runs: list[dict], heldout: dict) -> list[dict]:
    """Held-out bits per byte at each evaluated step: mean, lowest and highest over the seeds."""
    steps: dict[int, list[float]] = {}
    for run in runs:
        for point in run["curve"]:
            steps.setdefault(point["step"], []).append(bits_per_byte(point["loss"], heldout["tokens"], heldout["bytes"]))
    return [{"step": s, "mean": float(np.mean(v)), "low": min(v), "high": max(v)} for s, v in sorted(steps.items())]


def ablation_status(data_dir: Path) -> str | None:
    """One line per arm of DATA_DIR/ablation: its data (built or not) and its runs done; None without one."""
    root = Path(data_dir) / ABLATION_DIR
    plan_path = root / "plan.json"
    if not plan_path.is_file():
        return None
    plan = json.loads(plan_path.read_text())
    lines = ["ablation arm  data                                  runs done"]
    for arm in plan["arms"]:
        arm_file = root / "arms" / arm / ARM_FILE
        data = "not built" if not arm_file.is_file() else \
            "{tokens:,} tokens, {documents:,} documents".format(**json.loads(arm_file.read_text()))
        done = sum((root / "runs" / f"{arm}-seed{seed}" / RESULT_FILE).is_file() for seed in plan["seeds"])
        lines.append(f"  {arm:<12}{data:<38}{done} of {len(plan['seeds'])}")
    lines.append(f"  summary: {root / SUMMARY_FILE}" if (root / SUMMARY_FILE).is_file() else
                 "  no summary yet: the ablation is running, or was stopped (`make ablation` resumes it)")
    return "\n".join(lines)


def format_table(summary: dict) -> str:
    """The summary as a text table, then its notes."""
    header = ("arm", "stage", "documents", "tokens", "held-out bits/byte", "delta vs raw", "validation bits/byte")
    lines = []
    for row in summary["arms"]:
        held, delta = row["heldout"], row["delta_vs_raw"]
        val = row.get("validation")
        lines.append((row["name"], row["stage"], f"{row['documents']:,}", f"{row['tokens']:,}",
                      f"{held['mean']:.4f} ± {held['ci95']:.4f}",
                      "" if row["name"] == BASELINE else f"{delta['mean']:+.4f} ± {delta['ci95']:.4f}",
                      f"{val['mean']:.4f} ± {val['ci95']:.4f}" if val else "n/a"))
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *lines, strict=True)]
    out = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [header, *lines]]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out + [f"note: {n}" for n in summary["notes"]])
