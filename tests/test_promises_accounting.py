"""docs/data-stages.md (The stage contract): documents in = documents out + Σ dropped by reason, checked per unit and
for the stage before the manifest is written. A stage whose units lose or invent rows is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

from common.errors import AccountingError
from common.runner import MapStage, Plan, UnitContext, WorkUnit
from common.schema import DOC_SCHEMA, category_array
from tests.conftest import make_config

ROWS = 10


def _docs(unit: int, n: int) -> pa.Table:
    return pa.Table.from_pydict({
        "doc_id": [unit * 1000 + i for i in range(n)], "source_id": [f"u{unit}-{i}" for i in range(n)],
        "text": [f"document {i} of unit {unit}" for i in range(n)], "source": ["test"] * n,
        "category": category_array(["news"] * n), "lang": ["en"] * n, "lang_score": [1.0] * n, "meta": ["{}"] * n,
    }, schema=DOC_SCHEMA)


def _plan(cfg, input_dir) -> Plan:
    return Plan(units=[WorkUnit(index=i, spec={"unit": i}) for i in range(3)], input={"test": "accounting"})


def _lossy(unit: WorkUnit, ctx: UnitContext) -> None:
    """Unit 1 counts 10 in and keeps 9 (it lost a row), unit 2 counts 9 in and keeps 10 (it invented one).
    The stage's totals balance (29 in, 29 out), so only the per-unit check can see it."""
    counted, kept = {0: (ROWS, ROWS), 1: (ROWS, ROWS - 1), 2: (ROWS - 1, ROWS)}[unit.index]
    ctx.count_in(counted)
    ctx.keep(_docs(unit.index, kept))


def _balanced(unit: WorkUnit, ctx: UnitContext) -> None:
    ctx.count_in(ROWS)
    ctx.keep(_docs(unit.index, ROWS - 2))
    ctx.drop("test_reason", _docs(unit.index, 2), signal="dropped on purpose")


LOSSY = MapStage(name="ingest", output_schema=DOC_SCHEMA, plan=_plan, process=_lossy)
BALANCED = MapStage(name="ingest", output_schema=DOC_SCHEMA, plan=_plan, process=_balanced)


def test_a_unit_whose_counts_do_not_balance_is_refused(tmp_path: Path, run):
    with pytest.raises(AccountingError) as refused:
        run(LOSSY, tmp_path, make_config())
    message = str(refused.value)
    found = re.fullmatch(r"ingest unit (\d) \(\{'unit': \d\}\): in=(\d+) != out=(\d+) \+ dropped=0", message)
    assert found, message
    unit, docs_in, docs_out = map(int, found.groups())
    assert (unit, docs_in, docs_out) in {(1, ROWS, ROWS - 1), (2, ROWS - 1, ROWS)}
    assert f"{{'unit': {unit}}}" in message
    stage = tmp_path / "ingest"
    assert not (stage / "_manifest.json").exists() and not (stage / "_stats.json").exists()
    for bad in (1, 2):  # neither unbalanced unit leaves a done marker or a visible shard
        assert not (stage / "_work" / f"unit-{bad:05d}.json").exists()
        assert not (stage / f"part-{bad:05d}.arrow").exists()


def test_balanced_units_give_a_manifest(tmp_path: Path, run):
    manifest = run(BALANCED, tmp_path, make_config())
    assert manifest.accounting.to_dict() == {"in": 3 * ROWS, "out": 3 * (ROWS - 2), "dropped": {"test_reason": 6}}
    assert [s.rows for s in manifest.shards] == [ROWS - 2] * 3
