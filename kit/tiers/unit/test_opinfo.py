"""Unit tier, OpInfo half: one test per locked id ``unit/opinfo/<op>/<dtype>/<sample>``.

Parametrized from the standard's locked list, so collection stays fast (OpInfo's op_db is only
imported when the first test runs) and ids come from the standard alone.
"""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.pytest_plugin import parametrize_cases
from kit.tiers.unit.cases import OPINFO_PREFIX, run_unit_case


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_cases(metafunc, "unit", OPINFO_PREFIX)


def test_opinfo(case: str, ckit: KitContext) -> None:
    run_unit_case(ckit, case)
