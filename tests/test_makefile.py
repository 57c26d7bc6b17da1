"""The Makefile: `make help` lists every documented target under its group; `make data` passes its variables on."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import REPO


def test_make_help_lists_every_documented_target_under_its_group():
    documented = re.findall(r"^([\w.-]+):[^\n]*## ", (REPO / "Makefile").read_text(), re.M)
    shown = subprocess.run(["make", "-s", "help"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    listed = re.findall(r"^  make (\S+)", shown, re.M)
    assert "k8s-train" in documented and listed == documented
    groups = {match.group(1): re.findall(r"^  make (\S+)", match.group(2), re.M)
              for match in re.finditer(r"^(\w+):\n((?:  make .*\n)+)", shown, re.M)}
    assert list(groups) == ["data", "train", "test", "images", "k8s"]
    grouped = sum(groups.values(), [])
    assert sorted(grouped) == sorted(set(documented) - {"help"})
    assert {"data", "train", "test", "images"} <= set(grouped)
    assert all(target.startswith("k8s-") for target in groups["k8s"])


def test_make_data_passes_eval_sets_to_kiln_run():
    shown = subprocess.run(["make", "-n", "data", "EVAL_SETS=exams/cmmlu exams/ceval"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout
    assert "--eval-sets exams/cmmlu exams/ceval" in shown
