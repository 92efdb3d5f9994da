"""The flows tier suite: one test per locked id ``flows/<flow>/<unit id without "unit/">``.

Collection reads only the locked list, so it imports no backend (executorch, onnxruntime).
"""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.pytest_plugin import parametrize_cases
from kit.tiers.flows.cases import run_flow_case


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_cases(metafunc, "flows")


def test_flow(case: str, ckit: KitContext) -> None:
    run_flow_case(ckit, case)
