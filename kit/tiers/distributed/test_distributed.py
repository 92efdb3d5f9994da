"""The distributed tier suite: one test per locked id ``distributed/<collective>/...``."""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.pytest_plugin import parametrize_cases
from kit.tiers.distributed.cases import run_distributed_case


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_cases(metafunc, "distributed")


def test_distributed(case: str, ckit: KitContext) -> None:
    run_distributed_case(ckit, case)
