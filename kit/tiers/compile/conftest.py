from __future__ import annotations

import pytest

from kit.tiers.registry import get_tier


def pytest_ckit_warm_up(config: pytest.Config) -> None:
    get_tier("compile").warm_up()  # before the worker's first test, not in its time
