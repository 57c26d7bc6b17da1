"""Runs that could produce nothing useful fail before the work, saying what to change: an input folder with
no documents, a stage that kept none, a corpus without categories, a validation split that would be empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli


@pytest.fixture
def kiln_run(in_process):
    """`kiln run --data-dir <data> <args>` in this process (the refusals are the stages' own; test_pipeline_demo
    runs the command itself)."""
    return lambda data, *args: in_process("-m", "kiln", "run", "--data-dir", str(data), *args, check=False)


@pytest.fixture
def kiln_status(in_process):
    return lambda data: in_process("-m", "kiln", "status", str(data)).stdout


def test_an_input_folder_without_documents_is_refused_at_ingest(tmp_path: Path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "notes.md").write_text("not an input format")
    result = cli("-m", "kiln", "run", "--data-dir", str(tmp_path / "data"), "--input", str(tmp_path / "raw"),
                 check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "holds no input file of a known format" in result.stderr and "notes.md" in result.stderr


@pytest.fixture(scope="module")
def tiny_demo(tmp_path_factory) -> Path:
    """A demo corpus of 100 records (the smallest the generator writes)."""
    folder = tmp_path_factory.mktemp("tiny") / "demo"
    cli("-m", "kiln", "demo", str(folder), "--docs", "100")
    return folder / "corpus"


def test_a_tiny_corpus_is_refused_before_mixing_an_empty_validation_split(tiny_demo: Path, tmp_path: Path,
                                                                         kiln_run):
    result = kiln_run(tmp_path / "data", "--input", str(tiny_demo), "--set", "mix.validation_fraction=0.0001")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "mix.validation_fraction 0.0001 of" in result.stderr and "selects none" in result.stderr
    assert not (tmp_path / "data" / "mix" / "_manifest.json").exists()
    fixed = kiln_run(tmp_path / "data", "--input", str(tiny_demo), "--set", "mix.validation_fraction=0.2",
                     "--force",
                 "--set", "tokenize.min_sample_bytes=1000", "--set", "tokenize.seq_len=64")
    assert fixed.returncode == 0, fixed.stderr


def test_a_corpus_without_categories_is_refused_at_mix_not_trained_on_nothing(tiny_demo: Path, tmp_path: Path,
                                                                             kiln_run):
    result = kiln_run(tmp_path / "data", "--input", str(tiny_demo), "--set", "ingest.fields.category=no_such_field")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "have category 'unknown' and would be dropped" in result.stderr
    assert "ingest.source_categories" in result.stderr and "mix.unknown_category" in result.stderr
    assert not (tmp_path / "data" / "tokenize").exists()


def test_a_corpus_mostly_without_categories_fails_loudly_and_status_says_why(tiny_demo: Path, tmp_path: Path,
                                                                            kiln_run, kiln_status):
    """Only the encyclopedia file's records keep their category: mix would train on a fifth of the corpus."""
    result = kiln_run(tmp_path / "data", "--input", str(tiny_demo), "--set", "ingest.fields.category=no_such_field",
                  "--set", 'ingest.source_categories={"wiki_like": "encyclopedia"}')
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "would be dropped (mix.max_unknown_fraction 0.5)" in result.stderr
    status = kiln_status(tmp_path / "data")
    mix_row = next(line for line in status.splitlines() if line.startswith("mix "))
    assert "failed" in mix_row and "mix failed: mix:" in status and "mix.unknown_category" in status
    fixed = kiln_run(tmp_path / "data", "--input", str(tiny_demo), "--set", "ingest.fields.category=no_such_field",
                 "--set", 'ingest.source_categories={"wiki_like": "encyclopedia"}', "--set", "mix.unknown_category=news",
                 "--set", "tokenize.min_sample_bytes=1000", "--set", "tokenize.seq_len=64")
    assert fixed.returncode == 0, fixed.stderr
    assert "failed" not in kiln_status(tmp_path / "data")


def test_too_little_text_for_a_tokenizer_or_a_window_fails_loudly(tiny_demo: Path, tmp_path: Path, kiln_run,
                                                                  kiln_status):
    result = kiln_run(tmp_path / "data", "--input", str(tiny_demo), "--set", "mix.validation_fraction=0.2")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "below tokenize.min_sample_bytes 65,536" in result.stderr and "tokenize.tokenizer_path" in result.stderr
    windows = kiln_run(tmp_path / "data", "--input", str(tiny_demo), "--set", "mix.validation_fraction=0.2",
                   "--set", "tokenize.min_sample_bytes=1000", "--set", "tokenize.seq_len=1000000")
    assert windows.returncode == 2 and "Traceback" not in windows.stderr
    assert "fewer than one training window of tokenize.seq_len + 1 = 1,000,001" in windows.stderr
    assert not (tmp_path / "data" / "tokenize" / "_manifest.json").exists()
    assert "tokenize failed:" in kiln_status(tmp_path / "data")


def test_a_stage_after_one_that_kept_nothing_refuses_naming_the_drop_reasons(tiny_demo: Path, tmp_path: Path,
                                                                            kiln_run):
    result = kiln_run(tmp_path / "data", "--input", str(tiny_demo),
                      "--set", "clean.rules.too_short.min={\"*\": 1000000}")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "dedup: clean kept none of its" in result.stderr and "dropped:" in result.stderr
