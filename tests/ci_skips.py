"""A pytest plugin (loaded by pyproject's addopts for every suite): under ``CI=true`` a skipped test or
module fails, naming what it was missing. CI must install every tool, schema and engine the suites use;
a skip there would pass while nothing was tested. Locally a skip stays a skip, with its reason."""

from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    """Whether this run is CI's (``CI=true``, as GitHub Actions and .ci/run's caller set it)."""
    return os.environ.get("CI", "").strip().lower() == "true"


def _fail_instead(report: pytest.TestReport | pytest.CollectReport) -> None:
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"skipped under CI=true, where a skip fails (install what it needs in .ci/run): {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = (yield).get_result()
    if in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        _fail_instead(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    report = (yield).get_result()
    if in_ci() and report.skipped:
        _fail_instead(report)
