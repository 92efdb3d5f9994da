from __future__ import annotations

import pytest


def pytest_ckit_warm_up(config: pytest.Config) -> None:
    # OpInfo's database takes seconds to import; a worker pays it before its first test.
    import torch.testing._internal.common_methods_invocations  # noqa: F401

    import kit.tiers.unit.opinfo_cases  # noqa: F401
    import kit.tiers.unit.opspecs  # noqa: F401
