"""The fault hook lands a SIGKILL at the n-th pass of a named point, and nowhere else."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from common.faults import FAULT_ENV, parse_fault
from tests.conftest import REPO, child_env

PROBE = """
from common.faults import fault_point
for i in range(1, 6):
    fault_point("probe.other")
    fault_point("probe.step")
    print(i, flush=True)
"""


def _probe(spec: str | None) -> subprocess.CompletedProcess:
    env = child_env()
    if spec is not None:
        env[FAULT_ENV] = spec
    return subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60, start_new_session=True)


def test_the_third_pass_of_the_named_point_kills_the_process():
    result = _probe("probe.step:3")
    assert result.returncode == -signal.SIGKILL
    assert result.stdout.split() == ["1", "2"]


def test_without_the_variable_or_for_another_point_nothing_happens():
    assert _probe(None).stdout.split() == ["1", "2", "3", "4", "5"]
    assert _probe("probe.elsewhere:1").stdout.split() == ["1", "2", "3", "4", "5"]


@pytest.mark.parametrize("spec", ["probe.step", "probe.step:0", ":3", "probe.step:x"])
def test_a_malformed_spec_is_a_clear_error(spec: str):
    with pytest.raises(ValueError, match="expected <point>:<n>"):
        parse_fault(spec)
