from __future__ import annotations

import pytest


def pytest_ckit_warm_up(config: pytest.Config) -> None:
    # ExecuTorch and ONNX Runtime import in seconds; a worker pays it before its first test.
    # A flow whose packages are absent is NOT_APPLICABLE (decided by the kit), not a crash here.
    from kit.flows import flow_names, get_flow

    for name in flow_names():
        get_flow(name).unavailable_reason()
    import kit.tiers.flows.subjects  # noqa: F401
    import kit.tiers.unit.opinfo_cases  # noqa: F401
    import kit.tiers.unit.opspecs  # noqa: F401
