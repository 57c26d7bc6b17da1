"""`make help` lists every target the Makefile documents with a `##` description."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import REPO


def test_make_help_lists_every_documented_target():
    documented = re.findall(r"^([\w.-]+):[^\n]*## ", (REPO / "Makefile").read_text(), re.M)
    listed = re.findall(r"^  make (\S+)", subprocess.run(["make", "-s", "help"], cwd=REPO, capture_output=True,
                                                          text=True, check=True).stdout, re.M)
    assert "k8s-train" in documented and listed == documented
