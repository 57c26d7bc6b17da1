"""The mix stage: the exponent rule, the repetition cap, the validation split, realization on the demo."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from common.config import load_config
from common.errors import ConfigError
from common.manifest import require_manifest
from common.shards import read_shard
from stages.dedup.minhash import exact_keys
from stages.mix.plan import capped_allocation, exponent_shares, make_plan, repeats
from tests.conftest import cli


def test_exponent_rule_worked_example():
    shares = exponent_shares({"big": 80.0, "mid": 15.0, "small": 5.0}, alpha=0.7)
    assert [round(shares[s], 3) for s in ("big", "mid", "small")] == [0.688, 0.213, 0.099]
    assert exponent_shares({"a": 3.0, "b": 1.0}, alpha=1.0) == {"a": 0.75, "b": 0.25}


def test_the_cap_redistributes_to_uncapped_sources():
    shares = exponent_shares({"big": 800.0, "mid": 150.0, "small": 5.0}, alpha=0.7)
    allocation, unplaced = capped_allocation(1000.0, shares, {"big": 800.0, "mid": 150.0, "small": 5.0}, 4.0)
    assert allocation["small"] == pytest.approx(20.0)  # capped at 4 epochs of 5 tokens
    assert sum(allocation.values()) == pytest.approx(1000.0) and unplaced == 0.0
    assert allocation["big"] / allocation["mid"] == pytest.approx(shares["big"] / shares["mid"])


def test_an_empty_category_warns_and_its_weight_is_redistributed():
    plan = make_plan({"academic": {"a": 300.0}, "news": {"n": 100.0}}, {"academic": 3, "news": 1, "dialogue": 1},
                     0.7, 4.0, 400.0)
    assert any("'dialogue' has no data" in w for w in plan.warnings)
    assert plan.category_budget == pytest.approx({"academic": 300.0, "news": 100.0})


def test_a_budget_beyond_the_cap_is_reported():
    plan = make_plan({"academic": {"a": 10.0}, "news": {"n": 100.0}}, {"academic": 3, "news": 1}, 0.7, 4.0, 1000.0)
    assert plan.epochs == pytest.approx({"academic/a": 4.0, "news/n": 4.0})
    assert plan.unplaced == pytest.approx(560.0)
    assert any("cannot be placed" in w for w in plan.warnings)


def test_realized_repeats_follow_the_epochs_deterministically():
    draws = np.linspace(0, 1, 10_000, endpoint=False)
    copies = repeats(np.full(draws.size, 2.3), draws)
    assert set(copies.tolist()) == {2, 3} and copies.mean() == pytest.approx(2.3, abs=1e-3)


def test_bad_mix_settings_are_refused():
    with pytest.raises(ConfigError, match="sports"):
        load_config([], ['mix.category_weights={"sports": 1.0}'])
    with pytest.raises(ConfigError, match="not both"):
        load_config([], ["mix.budget_tokens=10", "mix.budget_documents=10"])


@pytest.fixture(scope="module")
def demo_mix(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("mix-demo")
    cli("-m", "kiln", "run", "--demo", "--demo-docs", "4000", "--data-dir", str(data))
    return data


def _rows(stage_dir: Path, infos) -> list[dict]:
    return [row for info in infos for row in read_shard(stage_dir, info).to_pylist()]


@pytest.mark.slow
def test_realized_mix_is_within_two_percent_of_plan(demo_mix: Path):
    summary = json.loads((demo_mix / "mix" / "mix_summary.json").read_text())
    weights = load_config().mix.category_weights
    total = sum(weights.values())
    for category, row in summary["categories"].items():
        assert row["planned_share"] == pytest.approx(weights[category] / total)
        assert abs(row["realized_share"] - row["planned_share"]) <= 0.02, (category, row)
    manifest = require_manifest(demo_mix / "mix")
    assert manifest.outputs["summary"][0].path == "mix_summary.json"


@pytest.mark.slow
def test_validation_never_shares_a_document_or_a_cluster_with_training(demo_mix: Path):
    manifest = require_manifest(demo_mix / "mix")
    train = _rows(demo_mix / "mix", manifest.shards)
    validation = _rows(demo_mix / "mix", manifest.outputs["validation"])
    assert validation and train
    assert not {r["doc_id"] for r in train} & {r["doc_id"] for r in validation}
    assert not set(exact_keys([r["text"] for r in train])) & set(exact_keys([r["text"] for r in validation]))
    assert all(r["repeat"] >= 1 for r in train) and all(r["repeat"] == 1 for r in validation)
    dedup = require_manifest(demo_mix / "dedup").accounting
    acc = manifest.accounting
    assert acc.docs_in == dedup.docs_out == acc.docs_out + sum(acc.dropped.values())
    assert acc.docs_out == len(train) + len(validation)


@pytest.mark.slow
def test_mix_is_deterministic(demo_mix: Path, tmp_path: Path):
    import shutil

    shutil.copytree(demo_mix / "dedup", tmp_path / "dedup")
    cli("-m", "stages.mix", "--data-dir", str(tmp_path), "--set", "ray.num_cpus=1")
    for name in ("_manifest.json", "mix_summary.json"):
        assert (tmp_path / "mix" / name).read_bytes() == (demo_mix / "mix" / name).read_bytes(), name


@pytest.mark.slow
def test_report_shows_the_planned_and_realized_mix(demo_mix: Path, tmp_path: Path):
    from kiln.report import write_report

    page = write_report(demo_mix, tmp_path).read_text()
    assert 'src="mix-categories.png"' in page and (tmp_path / "mix-categories.png").stat().st_size > 5000
    assert "academic/" in page and "epochs" in page
