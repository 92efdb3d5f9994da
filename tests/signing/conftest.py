"""Fixtures for the signing tests: a run directory, real keys, a keyring, all under tmp_path.

No test here writes into the repository: the config directory and key paths are redirected to
``tmp_path`` for every test, and each keyring is a temporary directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from signing_helpers import REPORT, SignedRun, make_signed_run, write_report_files


@pytest.fixture(autouse=True)
def private_keys(private_config: Path) -> Path:
    """Keys default to ``tmp_path/config/ckit/keys`` (the suite's ``private_config``)."""
    return private_config


@pytest.fixture
def signed_run(tmp_path: Path) -> SignedRun:
    return make_signed_run(tmp_path / "signed")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """An unsigned run directory with the four report files."""
    path = tmp_path / "run"
    write_report_files(path, REPORT)
    return path
