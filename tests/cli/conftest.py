"""Every test here keeps keys under tmp_path: the user's keys are never read nor written."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_keys(private_config: Path) -> Path:
    return private_config
