"""The scheduling plugin under pytest-xdist: the tests that share a module-scoped fixture run on one worker,
so the fixture is built once however many workers there are."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO, child_env, cli

MODULE = '''
import os
import pytest

@pytest.fixture(scope="module")
def built(tmp_path_factory):
    with open(os.environ["BUILDS"], "a") as log:
        log.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")

@pytest.mark.parametrize("n", range(8))
def test_shares_the_fixture(built, n):
    pass

@pytest.mark.parametrize("n", range(8))
def test_alone(n):
    pass
'''


def test_tests_sharing_a_module_fixture_run_on_one_worker_and_build_it_once(tmp_path: Path):
    (tmp_path / "test_shared.py").write_text(MODULE)
    builds = tmp_path / "builds.txt"
    result = cli("-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "tests.scheduling", "-q", "-p", "no:cacheprovider",
                 "--rootdir", str(tmp_path), str(tmp_path / "test_shared.py"),
                 env=child_env(BUILDS=str(builds), PYTHONPATH=str(REPO)))
    assert "16 passed" in result.stdout
    assert len(builds.read_text().split()) == 1, builds.read_text()
