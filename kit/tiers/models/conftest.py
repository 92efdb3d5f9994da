from __future__ import annotations

import pytest


def pytest_ckit_warm_up(config: pytest.Config) -> None:
    # transformers imports in seconds; a worker pays it before its first test.
    import transformers  # noqa: F401

    import kit.tiers.models.cases  # noqa: F401
