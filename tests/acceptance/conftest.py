"""Fixtures for the acceptance tests: keys and kit homes under tmp_path, never the user's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acceptance_helpers import full_report


@pytest.fixture(autouse=True)
def private_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keys go to ``tmp_path/config``; no kit home or signing key leaks in from the caller."""
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    for name in ("CKIT_HOME", "CKIT_SIGNING_KEY", "CKIT_KEY_PASSPHRASE", "CKIT_TODAY"):
        monkeypatch.delenv(name, raising=False)
    return config


@pytest.fixture(scope="session")
def complete_report() -> dict[str, Any]:
    """A complete run of standard v1, every test passed: graded conformant (built once)."""
    return full_report()
