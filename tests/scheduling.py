"""A pytest plugin (loaded by pyproject's addopts for every suite) that orders the tests for pytest-xdist."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``make test`` runs two workers, ``--dist loadgroup``), the tests of a module that
    use a module-scoped fixture run on one worker, so the fixture is built once; other tests go wherever a
    worker is free, unless their module names a group of its own (``xdist_group``). Tests marked slow are
    handed out first, so no long one starts when the other worker has nothing left to do."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    for item in items:
        fixtures = item._fixtureinfo.name2fixturedefs.values()
        if item.get_closest_marker("xdist_group") is None and any(defs[-1].scope == "module" for defs in fixtures):
            item.add_marker(pytest.mark.xdist_group(item.path.name))
