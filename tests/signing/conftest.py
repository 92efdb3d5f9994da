"""Fixtures for the signing tests: a run directory, real keys, a keyring, all under tmp_path.

No test here writes into the repository: the config directory and key paths are redirected to
``tmp_path`` for every test, and each keyring is a temporary directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from signing_fixtures import REPORT, SignedRun, make_signed_run, write_report_files


@pytest.fixture(autouse=True)
def private_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keys default to ``tmp_path/config/ckit/keys``; no signing env leaks in from the caller."""
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.delenv("CKIT_SIGNING_KEY", raising=False)
    monkeypatch.delenv("CKIT_KEY_PASSPHRASE", raising=False)
    monkeypatch.delenv("CKIT_HOME", raising=False)
    return config


@pytest.fixture
def signed_run(tmp_path: Path) -> SignedRun:
    return make_signed_run(tmp_path / "signed")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """An unsigned run directory with the four report files."""
    path = tmp_path / "run"
    write_report_files(path, REPORT)
    return path
