"""Kiln's default category model: how its threshold is chosen and measured, and how mix takes it up for a corpus
without categories."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from common.categories import CATEGORIES
from common.errors import KilnError
from kiln.category_model import choose_threshold, measure
from stages.mix.classifier import (
    DEFAULT_MODEL_REPORT,
    MODEL_NAME,
    REPORT_NAME,
    categorize,
    fasttext_text,
    fit_model,
    load_report,
    use_default_model,
)
from stages.mix.config import CategoryClassifierConfig
from tests.conftest import cli


def test_the_threshold_is_the_lowest_at_which_the_documents_above_it_reach_the_accuracy():
    probabilities = np.array([0.95, 0.9, 0.8, 0.7, 0.6, 0.5])
    correct = np.array([True, True, False, True, True, False])
    # Accuracy of the documents scored at least 0.95, 0.9, ...: 1, 1, 0.67, 0.75, 0.8, 0.67.
    assert choose_threshold(probabilities, correct, 0.8) == 0.6
    assert choose_threshold(probabilities, correct, 0.75) == 0.6
    assert choose_threshold(probabilities, correct, 0.9) == 0.9
    # Tied scores are covered together: stopping inside a tie would count documents the threshold also takes.
    tied = np.array([0.9, 0.8, 0.8, 0.5])
    assert choose_threshold(tied, np.array([True, True, False, True]), 0.9) == 0.9
    with pytest.raises(KilnError, match="no threshold"):
        choose_threshold(probabilities, np.zeros(6, dtype=bool), 0.5)


def test_coverage_accuracy_precision_and_recall_at_the_threshold():
    truth = ["news", "news", "dialogue", "dialogue", "academic"]
    predicted = ["news", "dialogue", "dialogue", "dialogue", "news"]
    figures = measure(truth, predicted, np.array([0.9, 0.95, 0.8, 0.3, 0.6]), threshold=0.5)
    assert figures["coverage"] == 0.8  # the 0.3 one is left unknown
    assert figures["accuracy"] == 0.5  # news and one dialogue right of the four labelled
    assert figures["top1_accuracy"] == 0.6
    news, dialogue, academic = (figures["by_category"][c] for c in ("news", "dialogue", "academic"))
    assert (news["precision"], news["recall"]) == (0.5, 0.5)  # labelled news twice, once right; one of two found
    assert (dialogue["precision"], dialogue["recall"]) == (0.5, 0.5)
    assert (academic["precision"], academic["recall"], academic["documents"]) == (0.0, 0.0, 1)


TOY = {"news": "the minister said on day {i} that the market rose and the bank cut its rate",
       "literature": "故乡的月光照在第{i}条小河上，她想起了远方的母亲和那年的雪"}


def _default_model(folder: Path, threshold: float) -> None:
    """A model folder as `kiln category-model` writes it, trained on toy examples."""
    folder.mkdir()
    examples = [(c, fasttext_text(t.format(i=i), 200)) for c, t in TOY.items() for i in range(60)]
    fit_model(examples, CategoryClassifierConfig(), folder / MODEL_NAME)
    row = {"documents": 10, "precision": 1.0, "recall": 1.0, "top1_accuracy": 1.0}
    (folder / DEFAULT_MODEL_REPORT).write_text(json.dumps({
        "threshold": threshold, "seed": {"by_category": {"news": 60, "literature": 60}},
        "test": {"documents": 20, "top1_accuracy": 1.0, "by_category": {"news": row, "literature": row}}}))


def test_mix_takes_the_default_model_with_its_own_threshold(tmp_path: Path):
    _default_model(tmp_path / "model", threshold=0.75)
    work = tmp_path / "work"
    work.mkdir()
    report = use_default_model(tmp_path / "model", work)
    assert report.origin == "default" and report.threshold == 0.75 and report.held_out == 20
    assert load_report(work) == report and (work / MODEL_NAME).read_bytes() == (tmp_path / "model" / MODEL_NAME).read_bytes()
    assert json.loads((work / REPORT_NAME).read_text())["trained_on"] == {"news": 60, "literature": 60}
    labels, scores = categorize(work / MODEL_NAME, ["the minister said that the bank cut its rate", "故乡的月光"],
                                ["unknown", "unknown"], CategoryClassifierConfig(), report.threshold)
    assert labels == ["news", "literature"] and (scores >= 0.75).all()


def test_without_labels_or_a_default_model_mix_says_how_to_build_one(tmp_path: Path):
    with pytest.raises(KilnError) as err:
        use_default_model(tmp_path / "nowhere", tmp_path)
    assert "make category-model" in str(err.value) and str(tmp_path / "nowhere") in str(err.value)
    assert "mix.classifier.labelled_sample" in str(err.value)


@pytest.mark.slow
def test_the_default_model_is_built_from_its_seed_set_and_measured_on_disjoint_packages(tmp_path: Path):
    """`kiln category-model` as docs/data-stages.md gives it: it chooses the threshold at which the calibration half
    is labelled at accuracy 0.85, reports coverage and accuracy on the test half, replaces an earlier build's pair,
    and mix takes the model up. (choose_threshold's refusal when no threshold qualifies is tested above.)"""
    _default_model(tmp_path / "model", threshold=0.5)  # an earlier build's: not to be paired with a new model
    out = cli("-m", "kiln", "category-model", "--out", str(tmp_path / "model"), timeout=900)
    report = json.loads((tmp_path / "model" / DEFAULT_MODEL_REPORT).read_text())
    assert report["threshold"] != 0.5 and report["min_accuracy"] == 0.85
    assert not set(report["seed"]["packages"]) & set(report["held_out"]["packages"])
    assert set(report["seed"]["by_category"]) == set(report["test"]["by_category"]) == set(CATEGORIES)
    assert all(n >= 30 for cell, n in report["held_out"]["by_cell"].items() if cell != "zh/encyclopedia")
    calibration, test = report["calibration"], report["test"]
    assert calibration["accuracy"] >= 0.85 and calibration["documents"] + test["documents"] == report["held_out"][
        "documents"]
    assert test["coverage"] >= 0.9 and test["accuracy"] >= 0.82  # measured: 94.8 % at 0.865 (goal: 90 % at 0.85)
    assert f"coverage {test['coverage']:.1%}" in out.stdout and "precision" in out.stdout
    work = tmp_path / "work"
    work.mkdir()
    assert use_default_model(tmp_path / "model", work).threshold == report["threshold"]
