"""Unit tier, YAML op spec half: one test per locked id ``unit/opspec/<template>/<dtype>/<case>``.

Parametrized from the standard's locked list, so collection stays fast and ids come from the
standard alone.
"""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.pytest_plugin import parametrize_cases
from kit.tiers.unit.cases import OPSPEC_PREFIX, run_unit_case


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_cases(metafunc, "unit", OPSPEC_PREFIX)


def test_opspecs(case: str, ckit: KitContext) -> None:
    run_unit_case(ckit, case)
