"""A pytest plugin (loaded by pyproject's addopts for every suite) that orders the tests for pytest-xdist."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``make test`` runs two workers, ``--dist loadgroup``), the tests of a module that
    use the same module-scoped fixtures run on one worker, so each such fixture is built once (tests of the
    module that use other ones may go to the other worker); other tests go wherever a worker is free, unless
    their module names a group of its own (``xdist_group``). Tests marked slow are handed out first, so no
    long one starts when the other worker has nothing left to do."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    for item in items:
        shared = sorted(name for name, defs in item._fixtureinfo.name2fixturedefs.items() if defs[-1].scope == "module")
        if item.get_closest_marker("xdist_group") is None and shared:
            item.add_marker(pytest.mark.xdist_group(f"{item.path.name}:{'+'.join(shared)}"))
