"""The model tier suite: one test per locked model test id (``models/<source>/<model>/<flow>``).

Collection reads only the locked list, so it imports no model package (transformers, timm).
"""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.pytest_plugin import parametrize_cases
from kit.tiers.models.cases import run_model_case


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_cases(metafunc, "models")


def test_model(case: str, ckit: KitContext) -> None:
    run_model_case(ckit, case)
