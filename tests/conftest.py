"""Suite-wide: a config home of the suite's own, and how tests split across pytest-xdist workers.

``make test`` runs the suite on every core (``pytest -n auto --dist loadgroup``). Tests that
share an expensive fixture must stay on one worker, or each worker pays for it again:

- a test using a session-scoped fixture of a directory's ``conftest.py`` (the container images,
  the Slurm cluster, the shared repository's real runs, the golden programs) is grouped with the
  rest of that directory;
- every other test is grouped with its file (module-scoped fixtures: one real run read by the
  file's tests).

Plain ``pytest`` without ``-n`` ignores the groups.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # Signing keys default to $XDG_CONFIG_HOME/ckit/keys: the suite must neither read the
    # developer's keys nor race another xdist worker generating the same vendor's key. Each
    # process (the xdist controller and every worker) gets a home of its own.
    home = tempfile.mkdtemp(prefix="ckit-suite-config-")
    os.environ["XDG_CONFIG_HOME"] = home
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(_worker_group(item)))
    if getattr(config.option, "loadgroup", False):  # set on xdist workers for --dist loadgroup
        _suffix_groups(items)


def _suffix_groups(items: list[pytest.Item]) -> None:
    """xdist's scheduler reads a test's group from an ``@group`` suffix on its node id; xdist
    3.8 writes it to ``item._nodeid``, which pytest 9.2 no longer reads (pytest-xdist #1386),
    so the suffix is written here, where pytest keeps the id."""
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # another pytest: the groups only cost time, never correctness
        return
    for item in items:
        if "@" in item.nodeid.rpartition("]")[2]:
            continue  # an xdist that still groups on its own did it already
        groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                         for m in item.iter_markers("xdist_group")})
        item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")  # type: ignore[attr-defined]


def _worker_group(item: pytest.Item) -> str:
    info = getattr(item, "_fixtureinfo", None)
    for definitions in (info.name2fixturedefs.values() if info else ()):
        for definition in definitions:
            if definition.scope == "session" and definition.baseid:
                return definition.baseid
    return item.nodeid.split("::", 1)[0]
