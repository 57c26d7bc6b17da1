"""The category classifier on the demo corpus: trained on the sources a user mapped, it labels the sources whose
categories are hidden, leaves what it is unsure of unknown, is reproducible, and restores the planned mix."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from common.manifest import require_manifest
from common.shards import read_shard
from demo.truth import load_truth
from tests.conftest import cli
from tests.test_resume_stages import assert_same_output

DEMO_DOCS = 4000
# One mapped source per category; every other source has its category hidden (configs/demo.yaml maps the
# .txt folder, as a user would a folder of one genre).
TXT_SOURCE = "literature_txt"
# The mapped sources are the second largest of each category: about a third of the corpus, so that
# without the classifier mix refuses to drop the rest as unknown.
MAPPED = {"thesis_like": "academic", "devwiki_like": "tech_docs", "baike_like": "encyclopedia",
          "portal_like": "news", "fiction_like": "literature", "qa_forum": "dialogue"}
HIDDEN = ("--set", "ingest.fields.category=no_such_field", "--set", f"ingest.source_categories={json.dumps(MAPPED)}")
CLASSIFIER = ("--set", "mix.classifier.enabled=true")
MIN_LABEL_ACCURACY = 0.9
MAX_SHARE_POINTS = 0.02


def _run(data: Path, *args: str, check: bool = True):
    return cli("-m", "kiln", "run", "--demo", "--demo-docs", str(DEMO_DOCS), "--data-dir", str(data),
               "--set", "ray.num_cpus=2", *HIDDEN, *args, timeout=1200, check=check)


@pytest.fixture(scope="module")
def classified(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("classified") / "data"
    refused = _run(data, check=False)
    assert refused.returncode == 2 and "mix.classifier.enabled" in refused.stderr  # without it: loud, not empty
    _run(data, *CLASSIFIER, "--set", "tokenize.vocab_size=2000")
    return data


def _mix_rows_of(stage: Path, infos) -> list[dict]:
    columns = ["source_id", "source", "category", "category_score"]
    return [row for info in infos for row in read_shard(stage, info).select(columns).to_pylist()]


def _mix_rows(stage: Path) -> list[dict]:
    manifest = require_manifest(stage)
    return _mix_rows_of(stage, [*manifest.shards, *manifest.outputs.get("validation", [])])


@pytest.mark.slow
def test_hidden_sources_are_labelled_accurately_and_unsure_ones_stay_unknown(classified: Path):
    truth = {r.source_id: r.category for r in load_truth(classified / "demo")}
    rows = _mix_rows(classified / "mix")
    hidden = [r for r in rows if r["source"] not in MAPPED and r["source"] != TXT_SOURCE]
    assert len(hidden) > 500
    assert all(not np.isnan(r["category_score"]) for r in hidden)  # each one went through the classifier
    assert all(np.isnan(r["category_score"]) for r in rows if r["source"] in MAPPED)  # mapped: no prediction
    right = sum(r["category"] == truth[r["source_id"]] for r in hidden)
    assert right / len(hidden) >= MIN_LABEL_ACCURACY, (right, len(hidden))
    summary = json.loads((classified / "mix" / "mix_summary.json").read_text())["classifier"]
    assert summary["held_out_accuracy"] >= MIN_LABEL_ACCURACY and summary["held_out"] > 50
    assert all(r["category_score"] >= summary["threshold"] for r in hidden)
    manifest = require_manifest(classified / "mix")
    assert {info.path for info in manifest.outputs["classifier"]} == {"category_classifier.bin",
                                                                       "category_classifier.json"}


@pytest.mark.slow
def test_the_classified_mix_lands_within_two_points_of_the_plan(classified: Path):
    summary = json.loads((classified / "mix" / "mix_summary.json").read_text())
    for category, row in summary["categories"].items():
        assert abs(row["realized_share"] - row["planned_share"]) <= MAX_SHARE_POINTS, (category, row)
    realized = Counter()
    for row in _mix_rows(classified / "mix"):
        realized[row["category"]] += 1
    assert set(realized) <= set(summary["categories"])


@pytest.mark.slow
def test_documents_below_the_threshold_stay_unknown(classified: Path, tmp_path: Path):
    strict = 0.99
    again = tmp_path / "data"
    shutil.copytree(classified, again)
    cli("-m", "stages.mix", "--data-dir", str(again), "--set", "ray.num_cpus=2", *HIDDEN, *CLASSIFIER, "--force",
        "--set", f"mix.classifier.threshold={strict}", "--set", "mix.max_unknown_fraction=1", timeout=900)
    manifest = require_manifest(again / "mix")
    train = [row for info in manifest.shards for row in read_shard(again / "mix", info).to_pylist()]
    predicted = [r for r in train if not np.isnan(r["category_score"])]
    assert predicted and all(r["category_score"] >= strict and r["category"] != "unknown" for r in predicted)
    assert manifest.accounting.dropped["unknown_category"] > 0  # the unsure ones, out of the training split
    validation = _mix_rows_of(again / "mix", manifest.outputs["validation"])
    unsure = [r for r in validation if r["category_score"] < strict]  # the validation split keeps every document
    assert unsure and all(r["category"] == "unknown" for r in unsure)


@pytest.mark.slow
def test_training_and_labelling_are_reproducible(classified: Path, tmp_path: Path):
    again = tmp_path / "data"
    shutil.copytree(classified, again)
    cli("-m", "stages.mix", "--data-dir", str(again), "--set", "ray.num_cpus=2", *HIDDEN, *CLASSIFIER, "--force",
        timeout=900)
    assert_same_output(again / "mix", classified / "mix")
