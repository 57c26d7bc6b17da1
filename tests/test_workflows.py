"""The GitHub workflows as a supply chain: every action pinned by commit, no credentials left in the
checkout, no permission a job does not name, and zizmor's audit clean at medium severity and above."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, tool

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
USES = re.compile(r"^\s*(?:- )?uses: (\S+)(.*)$", re.M)


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_every_action_is_pinned_by_commit_with_its_version_beside_it(workflow: Path):
    uses = USES.findall(workflow.read_text())
    assert uses
    for ref, comment in uses:
        if ref.startswith("./"):
            continue  # a workflow of this repository
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", ref), ref
        assert re.fullmatch(r"\s+# v\d+\.\d+\.\d+", comment), (ref, comment)


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_no_default_permissions_and_no_persisted_checkout_credentials(workflow: Path):
    spec = yaml.safe_load(workflow.read_text())
    assert spec["permissions"] == {}
    for name, job in spec["jobs"].items():
        assert "permissions" in job, name
        for step in job.get("steps", []):
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, name


def test_zizmor_finds_nothing_of_medium_or_high_severity():
    result = subprocess.run([tool("zizmor", "zizmor"), "--offline", "--min-severity", "medium", ".github/workflows"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
