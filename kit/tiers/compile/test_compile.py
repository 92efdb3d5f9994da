"""The compile tier suite: one test per locked id ``compile/<unit id without "unit/">``."""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.pytest_plugin import parametrize_cases
from kit.tiers.compile.cases import run_compile_case


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_cases(metafunc, "compile")


def test_compile(case: str, ckit: KitContext) -> None:
    run_compile_case(ckit, case)
