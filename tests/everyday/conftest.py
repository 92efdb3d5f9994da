"""Every test here keeps keys under tmp_path: the user's keys are never read nor written."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    for name in ("CKIT_SIGNING_KEY", "CKIT_KEY_PASSPHRASE", "CKIT_HOME", "CKIT_TODAY"):
        monkeypatch.delenv(name, raising=False)
    return config
