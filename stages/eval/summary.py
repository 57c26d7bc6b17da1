"""The evaluation report as text a person reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _perplexity(section: dict[str, Any]) -> list[str]:
    return [f"perplexity  {section['perplexity']:.3f}  (loss {section['loss']:.4f} over {section['tokens']:,} tokens "
            f"in {section['windows']:,} windows of {section['seq_len']}, {section['tokens_file']})"]


def _multiple_choice(section: dict[str, Any]) -> list[str]:
    rows = [(Path(f["file"]).name, f) for f in section["files"]] + [("overall", section["overall"])]
    width = max(len("file"), *(len(name) for name, _ in rows))
    lines = [f"multiple choice  ({section['scoring']})",
             f"  {'file':<{width}}  questions  correct  accuracy  acc_norm"]
    for name, counts in rows:
        lines.append(f"  {name:<{width}}  {counts['questions']:>9}  {counts['correct']:>7}  "
                     f"{counts['accuracy']:>8.3f}  {counts['accuracy_norm']:>8.3f}")
    return lines


def _generations(sampling: dict[str, Any], generations: list[dict[str, Any]]) -> list[str]:
    how = ("greedy" if sampling["temperature"] == 0 else
           f"temperature {sampling['temperature']}, top-k {sampling['top_k'] or 'off'}, seed {sampling['seed']}")
    lines = [f"generations  ({how}, at most {sampling['max_new_tokens']} new tokens)"]
    for item in generations:
        end = "<eos>" if item["stopped_at_eos"] else "..."
        lines.append(f"  {item['prompt']!r} -> {item['text']!r} {end}")
    return lines


def render(report: dict[str, Any]) -> str:
    """Checkpoint, perplexity, the accuracy table and the samples, with a line for each part that was skipped."""
    step = report["step"] if report["step"] is not None else "?"
    lines = [f"checkpoint  {report['checkpoint']}  (step {step}, {report['parameters']:,} parameters)"]
    if report["perplexity"]:
        lines += _perplexity(report["perplexity"])
    if report["multiple_choice"]:
        lines += _multiple_choice(report["multiple_choice"])
    if report["generations"]:
        lines += _generations(report["sampling"], report["generations"])
    lines += [f"note: {note}" for note in report["notes"]]
    return "\n".join(lines)
