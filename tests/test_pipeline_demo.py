"""`python -m stages --demo` (what `make data` runs) end to end, scored against the ground truth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from common.cli import read_kept_texts
from common.demo.truth import expected_ingest_counts, load_truth
from common.manifest import require_manifest
from tests.conftest import cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> tuple[Path, str]:
    data = tmp_path_factory.mktemp("demo-run")
    result = cli("-m", "stages", "--demo", "--demo-docs", "1500", "--data-dir", str(data))
    return data, result.stdout


def test_ingest_counts_match_the_ground_truth(demo_run):
    data, _ = demo_run
    truth = load_truth(data / "demo")
    accounting = require_manifest(data / "ingest").accounting
    expected = expected_ingest_counts(truth)
    assert accounting.docs_in == len(truth) == 1500
    assert accounting.docs_out == expected["ok"]
    assert accounting.dropped == {reason: n for reason, n in expected.items() if reason != "ok" and n}
    kept = read_kept_texts(data / "ingest")
    assert set(kept) == {r.source_id for r in truth if r.ingest == "ok"}


def test_categories_and_sources_survive_ingest(demo_run):
    data, _ = demo_run
    truth = {r.source_id: r for r in load_truth(data / "demo") if r.ingest == "ok"}
    manifest = require_manifest(data / "ingest")
    from common.shards import read_shard

    rows = [row for info in manifest.shards for row in read_shard(data / "ingest", info).to_pylist()]
    assert all(row["category"] == truth[row["source_id"]].category for row in rows)
    assert all(row["source"] == truth[row["source_id"]].source for row in rows)


def test_summary_status_and_eval_truth(demo_run):
    data, stdout = demo_run
    expected_ok = expected_ingest_counts(load_truth(data / "demo"))["ok"]
    for table in (stdout, cli("-m", "common.cli", "status", str(data)).stdout):
        row = next(line for line in table.splitlines() if line.startswith("ingest"))
        assert row.split()[:2] == ["ingest", "done"]
        assert row.split()[3:5] == ["1,500", f"{expected_ok:,}"]
    scored = json.loads(cli("-m", "common.cli", "eval-truth", str(data), "--json").stdout)
    ingest_kinds = {k["kind"]: k for k in scored["kinds"] if k["kind"].startswith("ingest:")}
    assert len(ingest_kinds) == 4 and all(k["rate"] == 1.0 for k in ingest_kinds.values())
    table = cli("-m", "common.cli", "eval-truth", str(data), "--stage", "ingest").stdout
    compared = 0
    for line in table.splitlines():
        if line.split()[:1] in (["bad_json"], ["bad_utf8"], ["missing_text"], ["empty_text"], ["ok"]):
            expected, got = line.split()[1:3]
            assert expected == got, line
            compared += 1
    assert compared == 5


def test_rerun_is_a_no_op(demo_run):
    data, _ = demo_run
    before = (data / "ingest" / "_manifest.json").read_bytes()
    again = cli("-m", "stages", "--demo", "--demo-docs", "1500", "--data-dir", str(data))
    assert "already done" in again.stderr
    assert (data / "ingest" / "_manifest.json").read_bytes() == before
