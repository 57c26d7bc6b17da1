"""Runs that could produce nothing useful fail before the work, saying what to change: an input folder with
no documents, a stage that kept none, a corpus without categories, a validation split that would be empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli


def _run(data: Path, *args: str):
    return cli("-m", "kiln", "run", "--data-dir", str(data), "--set", "ray.num_cpus=1", *args, check=False,
               timeout=600)


def test_an_input_folder_without_documents_is_refused_at_ingest(tmp_path: Path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "notes.md").write_text("not an input format")
    result = _run(tmp_path / "data", "--input", str(tmp_path / "raw"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "holds no input file of a known format" in result.stderr and "notes.md" in result.stderr


@pytest.fixture(scope="module")
def tiny_demo(tmp_path_factory) -> Path:
    """A demo corpus of 100 records (the smallest the generator writes)."""
    folder = tmp_path_factory.mktemp("tiny") / "demo"
    cli("-m", "kiln", "demo", str(folder), "--docs", "100")
    return folder / "corpus"


@pytest.mark.slow
def test_a_tiny_corpus_is_refused_before_mixing_an_empty_validation_split(tiny_demo: Path, tmp_path: Path):
    result = _run(tmp_path / "data", "--input", str(tiny_demo), "--set", "mix.validation_fraction=0.0001")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "mix.validation_fraction 0.0001 of" in result.stderr and "selects none" in result.stderr
    assert not (tmp_path / "data" / "mix" / "_manifest.json").exists()
    fixed = _run(tmp_path / "data", "--input", str(tiny_demo), "--set", "mix.validation_fraction=0.2", "--force")
    assert fixed.returncode == 0, fixed.stderr


@pytest.mark.slow
def test_a_corpus_without_categories_is_refused_at_mix_not_trained_on_nothing(tiny_demo: Path, tmp_path: Path):
    result = _run(tmp_path / "data", "--input", str(tiny_demo), "--set", "ingest.fields.category=no_such_field")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "can be trained on" in result.stderr and "have category 'unknown'" in result.stderr
    assert not (tmp_path / "data" / "tokenize").exists()


@pytest.mark.slow
def test_a_stage_after_one_that_kept_nothing_refuses_naming_the_drop_reasons(tiny_demo: Path, tmp_path: Path):
    result = _run(tmp_path / "data", "--input", str(tiny_demo), "--set", "clean.rules.too_short.min={\"*\": 1000000}")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "dedup: clean kept none of its" in result.stderr and "dropped:" in result.stderr
