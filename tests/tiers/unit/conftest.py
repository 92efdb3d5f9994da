"""The runs the unit tier's tests share: one planted-fault simnpu run (``unit_helpers.plant``)
and one fault-free cpu run (``unit_helpers.on_clean_cpu``)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from unit_helpers import CLEAN_CPU, PLANTED, run_unit


@pytest.fixture(scope="session")
def planted_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The records, by id, of one simnpu run with every registered fault planted."""
    if importlib.util.find_spec("simnpu") is None:
        pytest.skip("simnpu not installed")
    tests = PLANTED.tests()
    records = run_unit("simnpu", tests, tmp_path_factory.mktemp("planted"), PLANTED.faults())
    assert set(tests) <= set(records), sorted(set(tests) - set(records))
    return records


@pytest.fixture(scope="session")
def clean_cpu_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The records, by id, of one cpu run of every registered selection."""
    return run_unit("cpu", list(dict.fromkeys(CLEAN_CPU)), tmp_path_factory.mktemp("clean"), [])
