"""Unit tier, optimizer half: one test per locked id ``unit/optim/<optimizer>/<dtype>/<impl>-<n>``.

Parametrized from the standard's locked list, so collection stays fast (``optim_db`` is only
imported when the first test runs) and ids come from the standard alone.
"""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.pytest_plugin import parametrize_cases
from kit.tiers.unit.cases import run_unit_case
from kit.tiers.unit.optim_ids import OPTIM_PREFIX


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_cases(metafunc, "unit", OPTIM_PREFIX)


def test_optim(case: str, ckit: KitContext) -> None:
    run_unit_case(ckit, case)
