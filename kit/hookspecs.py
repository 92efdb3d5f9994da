"""Hooks the kit adds to pytest (registered by ``kit.pytest_plugin``)."""

from __future__ import annotations

import pytest


@pytest.hookspec
def pytest_ckit_warm_up(config: pytest.Config) -> None:
    """Pay a tier's one-time costs (heavy imports) before the first test is timed.

    Workers call this once after collection, so the per-test time limit measures tests, not
    ``import``s. Tier suites implement it in their ``conftest.py``.
    """
