"""Unit tier, module half: one test per locked id ``unit/module/<module>/<dtype>/<mode>-<n>``.

Parametrized from the standard's locked list, so collection stays fast (``module_db`` is only
imported when the first test runs) and ids come from the standard alone.
"""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.pytest_plugin import parametrize_cases
from kit.tiers.unit.cases import run_unit_case
from kit.tiers.unit.module_ids import MODULE_PREFIX


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_cases(metafunc, "unit", MODULE_PREFIX)


def test_module(case: str, ckit: KitContext) -> None:
    run_unit_case(ckit, case)
