"""`kiln report`'s training section: charts and summary of a run directory's metrics.jsonl and eval.jsonl."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from common.errors import KilnError
from kiln.report import write_report
from kiln.report_train import read_series, train_section
from stages.train.metrics import StepMetrics

CHARTS = ("loss", "grad-norm", "lr", "throughput", "step-time")


def step_line(step: int, loss: float | None, grad_norm: float | None = 2.0, skipped: bool = False) -> str:
    return json.dumps({"step": step, "loss": loss, "grad_norm": grad_norm, "lr": 3e-4 * min(1.0, (step + 1) / 10),
                       "tokens_per_s": 2000.0 + step, "step_time": 0.5, "data_wait_fraction": 0.04,
                       "tflops": 0.01, "mfu": 0.001, "skipped": skipped})


def make_run(run_dir: Path) -> None:
    """Steps 0-45 logged, a crash, a resume from the checkpoint at step 40 up to step 59; step 20 skipped."""
    rng = np.random.default_rng(0)
    lines = []
    for step in range(46):
        loss = None if step == 20 else 8.0 * math.exp(-step / 25) + 2.0 + 0.1 * rng.standard_normal()
        lines.append(step_line(step, 1.0 if step > 40 else loss,
                               grad_norm=None if step == 20 else 2.5 * math.exp(-step / 30), skipped=step == 20))
    lines += [step_line(step, 4.0 - step / 100) for step in range(40, 60)]
    run_dir.mkdir(parents=True)
    (run_dir / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    evals = [{"step": s, "val_loss": v, "val_perplexity": math.exp(v), "val_tokens": 4096}
             for s, v in ((20, 5.5), (40, 3.25), (60, 3.5))]
    (run_dir / "eval.jsonl").write_text("".join(json.dumps(e) + "\n" for e in evals))
    (run_dir / "run.json").write_text(json.dumps({
        "parameters": 1_234_567, "flops_per_token": 7.5e6, "device": "cpu", "peak_flops": 1e11,
        "global_batch": 8, "seq_len": 128, "world_size": 1, "total_steps": 100}))


def test_resumed_steps_replace_the_ones_logged_before(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    lines = [step_line(s, 5.0) for s in range(6)] + [step_line(s, 4.0) for s in (3, 4)]
    path.write_text("\n".join(lines) + "\n")
    series = read_series(path, StepMetrics)
    assert series["step"].tolist() == [0, 1, 2, 3, 4]
    assert series["loss"].tolist() == [5.0, 5.0, 5.0, 4.0, 4.0]


def test_line_being_written_is_left_out(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text(step_line(0, 5.0) + "\n" + step_line(1, 4.0)[:30])
    assert read_series(path, StepMetrics)["step"].tolist() == [0]
    path.write_text(step_line(0, 5.0) + "\n" + step_line(1, 4.0))
    assert read_series(path, StepMetrics)["step"].tolist() == [0, 1]


@pytest.mark.parametrize(("bad", "problem"), [
    ('{"step": 2, "loss": 3.0', "not valid JSON"),
    ('{"step": 2}', "missing keys"),
    (step_line(2, 3.0).replace('"step": 2', '"step": "2"'), "step must be a non-negative integer"),
    (step_line(2, 3.0).replace('"loss": 3.0', '"loss": "3.0"'), "loss must be a number or null"),
    ("[1, 2]", "expected a JSON object"),
])
def test_malformed_line_names_file_and_line(tmp_path: Path, bad: str, problem: str) -> None:
    run_dir = tmp_path / "train"
    run_dir.mkdir()
    (run_dir / "metrics.jsonl").write_text("\n".join([step_line(0, 5.0), step_line(1, 4.0), bad, step_line(3, 3.0)])
                                           + "\n")
    with pytest.raises(KilnError, match=rf"metrics\.jsonl, line 3: {problem}"):
        train_section(run_dir, tmp_path)


def test_no_section_without_steps(tmp_path: Path) -> None:
    assert train_section(tmp_path / "missing", tmp_path) == ""
    (tmp_path / "metrics.jsonl").write_text("")
    assert train_section(tmp_path, tmp_path) == ""


def test_report_of_a_training_run_alone(tmp_path: Path) -> None:
    make_run(tmp_path / "train")
    page = write_report(tmp_path)
    assert page == tmp_path / "report" / "index.html"
    html = page.read_text()
    for name in CHARTS:
        png = page.parent / f"train-{name}.png"
        assert f'src="{png.name}"' in html
        with Image.open(png) as image:
            assert image.format == "PNG" and image.size[0] >= 600 and image.size[1] >= 300
            assert len(image.getcolors(maxcolors=1 << 16) or range(1 << 16)) > 20
    cells = dict(re.findall(r"<tr><td>([^<]*)</td><td class=\"n\">([^<]*)</td></tr>", html))
    assert cells["steps logged"] == "60 of 100"
    assert cells["last step"] == "59"
    assert cells["final train loss"] == "3.4100 (step 59)"
    assert cells["min train loss"] == "3.4100 (step 59)"
    assert cells["last validation loss"] == "3.5000 (step 60)"
    assert cells["best validation loss"] == "3.2500 (step 40)"
    assert cells["best validation perplexity"] == f"{math.exp(3.25):.2f}"
    assert cells["skipped steps"] == "1 (1.67 %)"
    assert cells["median data wait"] == "4.0 %"
    assert cells["median MFU"] == "0.1 %"
    assert cells["parameters"] == "1,234,567 (1.2 M)"


def test_report_without_training_run_or_stages_is_refused(tmp_path: Path) -> None:
    with pytest.raises(KilnError, match="nothing to report"):
        write_report(tmp_path)
