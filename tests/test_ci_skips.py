"""Under CI=true a skip fails the run, naming what was missing; elsewhere it stays a skip."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, child_env

SKIPPING = '''
import pytest

def test_needs_a_tool():
    pytest.skip("frobnicate is not installed")

def test_passes():
    assert True
'''
SKIPPING_MODULE = 'import pytest\npytest.importorskip("no_such_module_anywhere")\n'


def _pytest(test_file: Path, ci: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.ci_skips", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(test_file.parent), str(test_file)], cwd=REPO, env=child_env(CI=ci),
                          capture_output=True, text=True, timeout=120)


def test_a_skip_fails_under_ci_and_names_what_was_missing(tmp_path: Path):
    tests = tmp_path / "test_tool.py"
    tests.write_text(SKIPPING)
    local = _pytest(tests, "false")
    assert local.returncode == 0 and "1 passed, 1 skipped" in local.stdout, local.stdout
    ci = _pytest(tests, "true")
    assert ci.returncode == 1 and "1 failed, 1 passed" in ci.stdout, ci.stdout
    assert "skipped under CI=true" in ci.stdout and "frobnicate is not installed" in ci.stdout


def test_a_module_that_skips_fails_collection_under_ci(tmp_path: Path):
    module = tmp_path / "test_module.py"
    module.write_text(SKIPPING_MODULE)
    assert _pytest(module, "false").returncode == 5  # everything skipped: pytest's "no tests ran"
    ci = _pytest(module, "true")
    assert ci.returncode == 2 and "skipped under CI=true" in ci.stdout and "no_such_module_anywhere" in ci.stdout
