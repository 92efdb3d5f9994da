"""The runs the unit tier's tests share: two planted-fault simnpu runs (``unit_helpers.plant``,
``unit_helpers.plant_apart``) and one fault-free cpu run (``unit_helpers.on_clean_cpu``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from planting_helpers import PlantedRun, matching
from unit_helpers import CLEAN_CPU, PLANTED, PLANTED_APART, UnitRun, unit_run


def _planted(planted: PlantedRun, directory: Path) -> UnitRun:
    """One simnpu run with every fault of ``planted`` planted; each test (id or pattern)
    registered has a record."""
    if importlib.util.find_spec("simnpu") is None:
        pytest.skip("simnpu not installed")
    tests = planted.tests()
    run = unit_run("simnpu", tests, directory, planted.faults())
    records = run.records
    assert all(matching(records, [test]) for test in tests), [
        test for test in tests if not matching(records, [test])]
    return run


@pytest.fixture(scope="session")
def planted_unit_run(tmp_path_factory: pytest.TempPathFactory) -> UnitRun:
    """The simnpu run with every fault registered through ``plant`` planted."""
    return _planted(PLANTED, tmp_path_factory.mktemp("planted"))


@pytest.fixture(scope="session")
def planted_run(planted_unit_run: UnitRun) -> dict[str, dict[str, Any]]:
    """The records, by id, of ``planted_unit_run``."""
    return planted_unit_run.records


@pytest.fixture(scope="session")
def planted_apart_run(tmp_path_factory: pytest.TempPathFactory) -> UnitRun:
    """The simnpu run with every fault registered through ``plant_apart`` planted."""
    return _planted(PLANTED_APART, tmp_path_factory.mktemp("planted-apart"))


@pytest.fixture(scope="session")
def clean_cpu_unit_run(tmp_path_factory: pytest.TempPathFactory) -> UnitRun:
    """One cpu run of every selection registered through ``on_clean_cpu``."""
    return unit_run("cpu", list(dict.fromkeys(CLEAN_CPU)), tmp_path_factory.mktemp("clean"), [])


@pytest.fixture(scope="session")
def clean_cpu_run(clean_cpu_unit_run: UnitRun) -> dict[str, dict[str, Any]]:
    """The records, by id, of ``clean_cpu_unit_run``."""
    return clean_cpu_unit_run.records
