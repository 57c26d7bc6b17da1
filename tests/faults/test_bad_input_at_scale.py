"""Bad input at scale: the demo corpus (its bad records mixed into good ones) plus a file of every other bad
kind and the same literature texts in legacy encodings. Every record is counted under its reason or kept,
every good record of the demo reaches clean's decision exactly as in the run without the extras, and each
transcoded copy is kept or dropped by clean exactly like its UTF-8 original."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from common.config_loader import REPO_ROOT
from common.manifest import require_manifest
from demo.truth import expected_ingest_counts, load_truth
from kiln.commands.eval_truth import read_kept_texts
from tests.conftest import cli
from tests.test_pipeline_demo import shared_demo_run

pytestmark = pytest.mark.slow

ENCODINGS = ("gbk", "gb18030", "utf-16", "cp1252")


def _add_bad_files(corpus: Path) -> dict[str, int]:
    """Write the extra bad files into ``corpus``; return how many records each reason must count."""
    extra = corpus / "extra"
    extra.mkdir()
    lines = [json.dumps({"id": "ok-extra", "text": "An extra good record. " * 20}),
             json.dumps({"id": "huge", "text": "x" * (11 * 1024 * 1024)})]
    (extra / "oversize.jsonl").write_text("\n".join(lines) + "\n")
    (extra / "photo.jsonl").write_bytes(b"\x89PNG\xff\x00\x01\x02 binary\n" * 50)  # 50 lines, none UTF-8
    pq.write_table(pa.table({"id": [f"p{i}" for i in range(12)], "body": ["a"] * 12}), extra / "notext.parquet")
    (extra / "cut.jsonl.gz").write_bytes(gzip.compress(b'{"id": "z", "text": "zz"}\n' * 2000)[:-100])
    return {"oversize": 1, "bad_utf8": 50, "missing_text": 12, "bad_file": 1}


def _add_encoded_copies(corpus: Path) -> dict[str, str]:
    """Copies of literature texts in legacy encodings, in a subfolder; returns copy file name -> original's."""
    originals = sorted((corpus / "literature_txt").glob("*.txt"))
    legacy = corpus / "literature_txt" / "legacy"
    legacy.mkdir()
    copies = {}
    for index, original in enumerate(originals[:40]):
        text = original.read_text(encoding="utf-8")
        if "\ufffd" in text:  # a replacement character is Unicode's own: no legacy file holds one
            continue
        encoding = ENCODINGS[index % len(ENCODINGS)]
        try:
            data = text.encode(encoding)
        except UnicodeEncodeError:  # cp1252 has no Han characters, GBK lacks a few: that copy stays UTF-8-free
            continue
        name = f"{encoding}-{original.name}"
        (legacy / name).write_bytes(data)
        copies[name] = original.name
    return copies


def _is_utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_every_bad_kind_mixed_into_the_demo_is_counted_and_the_good_records_reach_clean(tmp_path_factory,
                                                                                       tmp_path: Path):
    reference, _ = shared_demo_run(tmp_path_factory)
    corpus = tmp_path / "corpus"
    shutil.copytree(reference / "demo" / "corpus", corpus)
    expected_extra = _add_bad_files(corpus)
    copies = _add_encoded_copies(corpus)
    assert len(copies) >= 20
    data = tmp_path / "data"
    settings = ["--config", str(REPO_ROOT / "configs" / "demo.yaml"), "--set", "ingest.skip_bad_files=true",
                "--set", "ray.num_cpus=2"]
    ingest = cli("-m", "stages.ingest", "--input", str(corpus), "--data-dir", str(data), *settings, timeout=900)
    assert "photo.jsonl" in ingest.stderr and "not UTF-8 JSON" in ingest.stderr
    assert "notext.parquet" in ingest.stderr and "'body', 'id'" in ingest.stderr
    cli("-m", "stages.clean", "--data-dir", str(data), *settings, timeout=900)

    accounting = require_manifest(data / "ingest").accounting
    truth = load_truth(reference / "demo")
    expected = expected_ingest_counts(truth)
    for reason, count in expected_extra.items():
        assert accounting.dropped.get(reason, 0) == expected.get(reason, 0) + count, reason
    assert accounting.docs_out == expected["ok"] + 1 + len(copies)
    assert accounting.docs_in == accounting.docs_out + sum(accounting.dropped.values())
    details = json.loads((data / "ingest" / "_stats.json").read_text())["details"]
    not_utf8 = [c for c in copies if not _is_utf8(corpus / "literature_txt" / "legacy" / c)]  # ASCII cp1252 is UTF-8
    assert sum(details["transcoded"].values()) == len(not_utf8)

    kept_ingest = read_kept_texts(data / "ingest")
    assert {r.source_id for r in truth if r.ingest == "ok"} <= set(kept_ingest)
    copy_ids = {next(i for i in kept_ingest if i.endswith(copy)): original for copy, original in copies.items()}
    for copy, original in copy_ids.items():
        assert kept_ingest[copy] == kept_ingest[original], copy
    kept_clean, reference_clean = read_kept_texts(data / "clean"), read_kept_texts(reference / "clean")
    demo_ids = {r.source_id for r in truth}
    assert {i for i in kept_clean if i in demo_ids} == set(reference_clean)
    for copy, original in copy_ids.items():
        assert (copy in kept_clean) == (original in kept_clean), copy
