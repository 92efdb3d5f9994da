"""Suite-wide: a config home of the suite's own, and how tests split across pytest-xdist workers.

``make test`` runs the suite on every core (``pytest -n auto --dist loadgroup``). Tests that
share an expensive fixture must stay on one worker, or each worker pays for it again:

- a test using a session-scoped fixture of a directory's ``conftest.py`` (the container images,
  the Slurm cluster, the shared repository's real runs, the golden programs) is grouped with the
  rest of that directory;
- every other test is grouped with its file (module-scoped fixtures: one real run read by the
  file's tests). The session fixtures of this file are cheap and shared by the whole suite:
  they group nothing.

This file also holds what the report's layers (``tests/report``, ``tests/grading``,
``tests/formats``) build reports with: the real current standard (without its locked lists),
the real cpu vendor, real skip manifests.

Plain ``pytest`` without ``-n`` ignores the groups.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from report_helpers import TODAY, run_info

# The device is registered before anything of the suite can run autograd: torch's autograd
# engine sizes its per-device queues once, at its first backward, from the devices registered
# then, so a backward at collection (a test module building a gradient case) before simnpu's
# import would leave simnpu's device without a queue for every later test of that process. The
# kit's own workers import the vendor first for the same reason.
try:
    import simnpu  # noqa: F401
except ImportError:  # not installed: its tests skip
    pass

from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.grading import build_report, collect_environment
from kit.host import usable_cpus
from kit.results import TestRecord
from kit.runner.heap import hold_collection, settle_heap
from kit.standard import Standard, load_standard
from kit.tiers.registry import tier_names
from kit.vendors import SkipManifest, VendorProfile, load_skip_manifest, load_vendor

#: The suite's root directory, as pytest names it in a fixture's ``baseid``.
SUITE_ROOT = Path(__file__).parent.name


def pytest_configure(config: pytest.Config) -> None:
    # Collection imports torch and OpInfo's database: collect their garbage once, after it
    # (``pytest_collection_finish``), as the kit's worker does after its start-up. An xdist
    # controller collects nothing: it keeps collecting garbage as usual.
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        hold_collection()
    if hasattr(config, "workerinput"):
        _share_the_cores(int(config.workerinput["workercount"]))
    # Signing keys default to $XDG_CONFIG_HOME/ckit/keys: the suite must neither read the
    # developer's keys nor race another xdist worker generating the same vendor's key. Each
    # process (the xdist controller and every worker) gets a home of its own.
    home = tempfile.mkdtemp(prefix="ckit-suite-config-")
    os.environ["XDG_CONFIG_HOME"] = home
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))


def _share_the_cores(workers: int) -> None:
    """Each xdist worker computes on its share of the cores, and so do the commands its tests
    start (``OMP_NUM_THREADS``; a ``ckit run``'s own workers and judges take the orchestrator's
    share, ``kit.runner.threads``). torch's default, every core in every process, oversubscribes
    the cores: its threads spin waiting for each other at every parallel region, and on a busy
    2-core machine the vacuity check of three 2^24-element tests took 30 to 56 s of CPU with 2
    threads, 3 s with 1."""
    import torch

    share = max(1, usable_cpus() // max(1, workers))
    os.environ["OMP_NUM_THREADS"] = str(share)
    torch.set_num_threads(share)


def pytest_collection_finish(session: pytest.Session) -> None:
    settle_heap()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(_worker_group(item)))
    _heaviest_groups_first(items)
    if getattr(config.option, "loadgroup", False):  # set on xdist workers for --dist loadgroup
        _suffix_groups(items)


def _heaviest_groups_first(items: list[pytest.Item]) -> None:
    """xdist hands out groups in collection order, so a heavy group collected last keeps one
    worker busy long after the other is idle: groups holding a ``slow(seconds=N)`` test go
    first, the heaviest first (the same order in every process; otherwise collection order)."""
    weight: dict[str, float] = {}
    for item in items:
        group = _group_of(item)
        weight[group] = max(weight.get(group, 0.0), _slow_seconds(item))
    first_seen = {group: n for n, group in enumerate(dict.fromkeys(map(_group_of, items)))}
    items.sort(key=lambda item: (-weight[_group_of(item)], first_seen[_group_of(item)]))


def _group_of(item: pytest.Item) -> str:
    marker = item.get_closest_marker("xdist_group")
    return str(marker.args[0]) if marker is not None and marker.args else ""


def _slow_seconds(item: pytest.Item) -> float:
    """A ``slow`` test's rough duration on 2 busy cores (``seconds=``; 30 when not given)."""
    marker = item.get_closest_marker("slow")
    return 0.0 if marker is None else float(marker.kwargs.get("seconds", 30))


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
            if definition.scope == "session" and definition.baseid not in ("", SUITE_ROOT):
                return definition.baseid
    return item.nodeid.split("::", 1)[0]


@pytest.fixture(scope="session", autouse=True)
def _temporary_files_in_pytests_directory(tmp_path_factory: pytest.TempPathFactory) -> None:
    """What the tests and the commands they start leave in the temporary directory (``ckit
    submit`` without ``--push`` keeps its clone, by design) goes where pytest's own directories
    go, and with them (pytest keeps the last three sessions'), never piling up in /tmp."""
    tmp_path_factory.getbasetemp()  # pytest's own first, where it always was
    directory = str(tmp_path_factory.mktemp("tmp"))
    os.environ["TMPDIR"] = directory
    tempfile.tempdir = directory


@pytest.fixture
def private_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keys default to ``tmp_path/config/ckit/keys``; no signing, kit-home or clock setting
    leaks in from the caller. Directories whose every test needs it use it autouse."""
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    for name in ("CKIT_SIGNING_KEY", "CKIT_KEY_PASSPHRASE", "CKIT_HOME", "CKIT_TODAY"):
        monkeypatch.delenv(name, raising=False)
    return config


# --- building reports (tests/report, tests/grading, tests/formats) -------------------------


@pytest.fixture(scope="session")
def standard() -> Standard:
    # Without test lists: the locked lists of the checkout must not decide these tests' grades.
    return dataclasses.replace(load_standard(), test_lists={})


@pytest.fixture(scope="session")
def vendor() -> VendorProfile:
    return load_vendor("cpu")


@pytest.fixture(scope="session")
def environment() -> dict[str, Any]:
    return collect_environment(DeviceInfo("cpu", 1, "x86_64"))


@pytest.fixture
def manifest(tmp_path: Path) -> Callable[[Sequence[dict[str, str]]], SkipManifest]:
    """Write a skip manifest YAML file with these entries and load it the kit's way."""

    def write(entries: Sequence[dict[str, str]]) -> SkipManifest:
        path = tmp_path / "skips.yaml"
        path.write_text(yaml.safe_dump({"skips": list(entries)}), encoding="utf-8")
        return load_skip_manifest(path)

    return write


@pytest.fixture
def make_report(
    standard: Standard, vendor: VendorProfile, environment: dict[str, Any]
) -> Callable[..., dict[str, Any]]:
    def make(
        records: Sequence[TestRecord],
        *,
        skips: SkipManifest | None = None,
        run: dict[str, Any] | None = None,
        today: dt.date = TODAY,
        clock: RunDate | None = None,
        standard_override: Standard | None = None,
        environment_override: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        judged_by = standard_override or standard
        return build_report(
            records=records,
            standard=judged_by,
            vendor=vendor,
            skips=skips or SkipManifest(entries=()),
            environment=environment_override or environment,
            # Every tier the standard carries (v1 predates some of the kit's tiers).
            run=run or run_info(tiers=[t for t in tier_names() if judged_by.carries(t)]),
            # Time frozen honestly: as if the system clock read ``today`` (no override).
            clock=clock or RunDate(today),
        )

    return make
