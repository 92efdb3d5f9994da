"""Unit tier, the sweep: one test per locked id ``unit/sweep/<op>/<dtype>/<sample>``, every
OpInfo of the release the unit list does not name (``kit.tiers.unit.sweep``), run as the
unit list's OpInfo tests are."""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.pytest_plugin import parametrize_cases
from kit.tiers.unit.cases import SWEEP_PREFIX, run_unit_case


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_cases(metafunc, "unit", SWEEP_PREFIX)


def test_sweep(case: str, ckit: KitContext) -> None:
    run_unit_case(ckit, case)
