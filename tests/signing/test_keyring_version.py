"""keyring.json's ``version``: the first root to sign new content raises it, later roots sign
that same edition, and ``ckit keys list --json`` shows it (real keys, the real CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_keyring_trust_cli import Keys

from kit.signing.keyring import MANIFEST_NAME, parse_manifest


def _version(keys: Keys) -> int:
    return parse_manifest((keys.keyring / MANIFEST_NAME).read_bytes()).version


@pytest.fixture
def keys(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Keys:
    made = Keys(capsys, tmp_path)
    made.ok("keys", "add", "--keyring", made.keyring, "--vendor", "acme",
            "--public-key", made.vendor_public)
    return made


def test_each_signed_edition_raises_the_version(keys: Keys) -> None:
    unsigned = _version(keys)
    assert f"version {unsigned + 1} with root" in keys.sign_keyring()
    keys.ok("keys", "revoke", keys.vendor_keyid, "--keyring", keys.keyring, "--reason", "leak")
    assert _version(keys) == unsigned + 1  # an edit keeps it; signing the edit raises it
    assert f"version {unsigned + 2} with root" in keys.sign_keyring()
    assert keys.list_json()["version"] == unsigned + 2


def test_a_second_root_signs_the_same_edition(keys: Keys, tmp_path: Path) -> None:
    second = tmp_path / "offline" / "root-2.pem"
    keys.ok("keys", "root-generate", "--out", second, "--public-dir", keys.roots)
    keys.sign_keyring()
    signed = _version(keys)
    out = keys.ok("keys", "sign-keyring", "--keyring", keys.keyring, "--root-key", second)
    assert f"version {signed} with root" in out and "now holds 2 root signature(s)" in out
    envelope = json.loads((keys.keyring / "keyring.json.sig").read_text())
    assert len(envelope["signatures"]) == 2 and _version(keys) == signed
