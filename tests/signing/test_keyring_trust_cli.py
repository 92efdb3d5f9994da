"""``ckit keys root-generate|add|sign-keyring|retire|revoke|list`` end to end, real keys."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from signing_helpers import VENDOR

from kit.cli import main
from kit.errors import ExitCode, VerificationError
from kit.signing.keyring import MANIFEST_SIGNATURE_NAME
from kit.signing.sign import sign_output_dir
from kit.signing.trust import load_trusted_keyring
from kit.verification.verify import verify_envelope

KEYID_LINE = re.compile(r"^keyid:\s+([0-9a-f]{64})$", re.MULTILINE)


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _ok(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> str:
    code, out, err = _run(capsys, *argv)
    assert code == ExitCode.OK, err
    return out


def _keyid(out: str) -> str:
    match = KEYID_LINE.search(out)
    assert match, out
    return match.group(1)


class Keys:
    """A root pinned in ``roots``, a vendor key filed in ``keyring``, and their files."""

    def __init__(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        self.capsys = capsys
        self.roots = tmp_path / "verifier" / "roots"
        self.keyring = tmp_path / "keyring"
        self.root_key = tmp_path / "offline" / "root.pem"
        self.vendor_key = tmp_path / "vendor-keys" / "acme.pem"
        out = _ok(
            capsys, "keys", "root-generate", "--out", self.root_key, "--public-dir", self.roots
        )
        self.root_keyid = _keyid(out)
        out = _ok(
            capsys, "keys", "generate", "--vendor", VENDOR, "--keyring", self.keyring,
            "--out", self.vendor_key,
        )
        self.vendor_keyid = _keyid(out)

    @property
    def vendor_public(self) -> Path:
        return self.keyring / VENDOR / f"{self.vendor_keyid}.pub.pem"

    def ok(self, *argv: str | Path) -> str:
        return _ok(self.capsys, *argv)

    def list_text(self) -> str:
        return self.ok("keys", "list", "--keyring", self.keyring, "--trust-roots", self.roots)

    def list_json(self) -> dict[str, object]:
        out = self.ok(
            "keys", "list", "--keyring", self.keyring, "--trust-roots", self.roots, "--json"
        )
        document = json.loads(out)
        assert isinstance(document, dict)
        return document

    def sign_keyring(self) -> str:
        return self.ok(
            "keys", "sign-keyring", "--keyring", self.keyring, "--root-key", self.root_key
        )


@pytest.fixture
def keys(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Keys:
    return Keys(capsys, tmp_path)


def test_root_generate_writes_the_public_key_where_asked(keys: Keys) -> None:
    assert (keys.roots / f"{keys.root_keyid}.pub.pem").is_file()
    assert keys.root_key.is_file()
    assert keys.root_key.stat().st_mode & 0o077 == 0


def test_add_sign_list_verify_then_revoke(keys: Keys, run_dir: Path) -> None:
    out = keys.ok(
        "keys", "add", "--keyring", keys.keyring, "--vendor", VENDOR,
        "--public-key", keys.vendor_public, "--not-before", "2020-01-01",
    )
    assert f"added key {keys.vendor_keyid} for vendor acme" in out
    assert "unsigned until the roots sign it again" in out
    assert keys.list_text().splitlines()[0] == (
        f"signature: does not hold: {MANIFEST_SIGNATURE_NAME} is missing from {keys.keyring}: "
        "keyring.json is not signed by a trust root"
    )

    out = keys.sign_keyring()
    assert f"with root {keys.root_keyid}" in out
    assert f"{MANIFEST_SIGNATURE_NAME} now holds 1 root signature(s)" in out
    lines = keys.list_text().splitlines()
    assert lines[0] == f"signature: holds (roots {keys.roots})"
    vendor, keyid, status, window = lines[1].split("\t")
    assert (vendor, keyid, status) == (VENDOR, keys.vendor_keyid, "active")
    assert re.fullmatch(r"2020-01-01T00:00:00Z\.\.20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ", window)

    sign_output_dir(run_dir, keys.vendor_key, None)
    trusted = load_trusted_keyring(keys.keyring, keys.roots)
    assert verify_envelope(run_dir, trusted=trusted).vendor == VENDOR
    out = keys.ok("verify", run_dir, "--keyring", keys.keyring, "--trust-roots", keys.roots)
    assert out.startswith(f"OK: {VENDOR} report signed by {keys.vendor_keyid[:16]}")

    out = keys.ok(
        "keys", "revoke", keys.vendor_keyid[:12], "--keyring", keys.keyring,
        "--reason", "laptop stolen",
    )
    assert f"revoked key {keys.vendor_keyid}" in out
    assert "keyring.json changed: 1 root signature(s) dropped" in out
    assert not (keys.keyring / MANIFEST_SIGNATURE_NAME).exists()

    keys.sign_keyring()
    document = keys.list_json()
    assert document["signature_holds"] is True
    [entry] = document["keys"]  # type: ignore[misc]
    assert (entry["keyid"], entry["status"], entry["reason"]) == (
        keys.vendor_keyid, "revoked", "laptop stolen"
    )
    with pytest.raises(VerificationError, match=r"^step 4: key [0-9a-f]{16} of vendor acme was "
                       r"revoked at \S+ \(laptop stolen\); it is refused whatever"):
        verify_envelope(run_dir, trusted=load_trusted_keyring(keys.keyring, keys.roots))
    code, _, err = _run(
        keys.capsys, "verify", run_dir, "--keyring", keys.keyring, "--trust-roots", keys.roots
    )
    assert code == ExitCode.VERIFICATION_FAILED
    assert re.match(r"ckit: error: step 4: key [0-9a-f]{16} of vendor acme was revoked", err)


def test_retired_key_still_verifies_what_it_signed_before(keys: Keys, run_dir: Path) -> None:
    keys.ok(
        "keys", "add", "--keyring", keys.keyring, "--vendor", VENDOR,
        "--public-key", keys.vendor_public, "--not-before", "2020-01-01",
    )
    sign_output_dir(run_dir, keys.vendor_key, None)  # the report finished minutes ago
    out = keys.ok("keys", "retire", keys.vendor_keyid, "--keyring", keys.keyring)
    assert f"retired key {keys.vendor_keyid}" in out
    keys.sign_keyring()
    trusted = load_trusted_keyring(keys.keyring, keys.roots)
    assert trusted.entry(keys.vendor_keyid) is not None
    assert verify_envelope(run_dir, trusted=trusted).vendor == VENDOR


def test_list_reports_a_key_file_missing_from_the_manifest(keys: Keys) -> None:
    keys.ok(
        "keys", "add", "--keyring", keys.keyring, "--vendor", VENDOR,
        "--public-key", keys.vendor_public,
    )
    keys.sign_keyring()
    stray_key = keys.root_key.parent / "stray.pem"
    out = keys.ok(
        "keys", "generate", "--vendor", VENDOR, "--keyring", keys.keyring, "--out", stray_key
    )
    stray_public = keys.keyring / VENDOR / f"{_keyid(out)}.pub.pem"
    assert f"unlisted (not trusted): {stray_public}" in keys.list_text().splitlines()
    assert keys.list_json()["unlisted_key_files"] == [str(stray_public)]


def test_the_same_root_cannot_sign_twice(keys: Keys, capsys: pytest.CaptureFixture[str]) -> None:
    keys.ok(
        "keys", "add", "--keyring", keys.keyring, "--vendor", VENDOR,
        "--public-key", keys.vendor_public,
    )
    keys.sign_keyring()
    code, _, err = _run(
        capsys, "keys", "sign-keyring", "--keyring", keys.keyring, "--root-key", keys.root_key
    )
    assert code == ExitCode.INPUT_ERROR
    assert err == (
        f"ckit: error: root key {keys.root_keyid[:16]} has already signed this keyring.json\n"
    )


def test_a_key_is_added_once(keys: Keys, capsys: pytest.CaptureFixture[str]) -> None:
    argv = (
        "keys", "add", "--keyring", keys.keyring, "--vendor", VENDOR,
        "--public-key", keys.vendor_public,
    )
    keys.ok(*argv)
    code, _, err = _run(capsys, *argv)
    assert code == ExitCode.INPUT_ERROR
    assert err == (
        f"ckit: error: key {keys.vendor_keyid[:16]} is already listed (vendor acme, active); "
        "a key has one entry\n"
    )


def test_revoke_needs_a_listed_key(keys: Keys, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(
        capsys, "keys", "revoke", "0123456789abcdef", "--keyring", keys.keyring,
        "--reason", "lost",
    )
    assert code == ExitCode.INPUT_ERROR
    assert err == "ckit: error: keyid '0123456789abcdef' is not listed in keyring.json\n"


def _vendor_argv(keys: Keys, docs_url: str = "https://acme.example/ckit") -> tuple[str | Path, ...]:
    return ("keys", "vendor", "--keyring", keys.keyring, "--vendor", VENDOR, "--name", "Acme NPU",
            "--contact", "conformance@acme.example", "--docs-url", docs_url)


def test_vendor_identity_is_signed_with_the_keyring(keys: Keys) -> None:
    keys.ok("keys", "add", "--keyring", keys.keyring, "--vendor", VENDOR,
            "--public-key", keys.vendor_public)
    keys.sign_keyring()
    unchanged = (keys.keyring / "keyring.json").read_bytes()
    assert b'"vendors"' not in unchanged  # a keyring without identities keeps its old shape
    out = keys.ok(*_vendor_argv(keys))
    assert "1 root signature(s) dropped" in out  # the roots must vouch for who acme is
    assert keys.list_json()["signature_holds"] is False
    keys.sign_keyring()
    trusted = load_trusted_keyring(keys.keyring, keys.roots)
    identity = trusted.manifest.identity(VENDOR)
    assert identity is not None and identity.name == "Acme NPU"
    assert keys.list_json()["vendors"] == [identity.to_json()]
    # Edited by hand, the name is no longer what the roots signed: the keyring is refused.
    path = keys.keyring / "keyring.json"
    path.write_bytes(path.read_bytes().replace(b"Acme NPU", b"NVIDIA Corporation (H100)"))
    with pytest.raises(VerificationError):
        load_trusted_keyring(keys.keyring, keys.roots)


def test_vendor_docs_link_must_be_https(keys: Keys, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, *_vendor_argv(keys, "javascript:alert(1)"))
    assert code == ExitCode.INPUT_ERROR
    assert err == "ckit: error: acme docs_url must be an https:// link\n"
