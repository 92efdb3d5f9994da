"""The kit digest pins a report to the exact kit code and standard files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kit import paths
from kit.hashing import kit_digest


def test_the_digest_is_stable_and_a_sha256() -> None:
    first = kit_digest()
    assert first == kit_digest()
    assert len(first) == 64 and int(first, 16) >= 0


def test_one_changed_byte_in_the_standard_changes_the_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(paths.standards_dir(), tmp_path / "standards")
    monkeypatch.setenv("CKIT_HOME", str(tmp_path))
    unchanged = kit_digest()
    tolerance_file = tmp_path / "standards" / "v1" / "standard.yaml"
    tolerance_file.write_text(tolerance_file.read_text().replace("1.0e-4", "1.1e-4", 1))
    assert kit_digest() != unchanged


def test_bytecode_caches_do_not_change_the_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(paths.standards_dir(), tmp_path / "standards")
    monkeypatch.setenv("CKIT_HOME", str(tmp_path))
    before = kit_digest()
    cache = tmp_path / "standards" / "__pycache__"
    cache.mkdir()
    (cache / "x.cpython-311.pyc").write_bytes(b"\0")
    assert kit_digest() == before
