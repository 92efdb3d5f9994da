"""Attacks on what the auditor trusts: the root-signed keyring (check 9 and the repository's
trust check) and the acceptance policy (check 8). Each fails the audit with its own line, given
the auditor's roots, policy and list of released kits (``SharedRepo.audit_args``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from repository_helpers import SharedRepo
from test_audit_attacks import Expected, Repo, _copy, _resign_and_refile

from kit.cli import main
from kit.errors import ExitCode
from kit.repository.audit import TRUST_CHECK
from kit.repository.submission_checks import KEY, POLICY
from kit.signing.keys import generate_private_key, keyid_of, load_private_key, public_key_pem


def _keyid(repo: Repo, vendor: str) -> str:
    return keyid_of(load_private_key(repo.shared.keys[vendor], None).public_key())


def _keys(*argv: str) -> None:
    assert main(["keys", *argv]) == ExitCode.OK


def _sign_keyring(repo: Repo) -> None:
    _keys("sign-keyring", "--keyring", str(repo.root / "keyring"),
          "--root-key", str(repo.shared.root_key))


def revoked_key(repo: Repo) -> Expected:
    keyid = _keyid(repo, "cpu")
    _keys("revoke", keyid, "--keyring", str(repo.root / "keyring"), "--reason", "laptop stolen")
    _sign_keyring(repo)
    return Expected(repo.keys["cpu"], KEY, f"key {keyid[:16]} of vendor cpu was revoked")


def key_expired_before_the_run(repo: Repo) -> Expected:
    manifest = repo.root / "keyring" / "keyring.json"
    document = json.loads(manifest.read_text())
    keyid = _keyid(repo, "cpu")
    for entry in document["keys"]:
        if entry["keyid"] == keyid:
            entry["not_after"] = "2021-01-01T00:00:00Z"
    manifest.write_text(json.dumps(document, indent=2) + "\n")
    (repo.root / "keyring" / "keyring.json.sig").unlink()
    _sign_keyring(repo)
    return Expected(repo.keys["cpu"], KEY, f"key {keyid[:16]}", first=False)


def keyring_entry_added_without_root_signature(repo: Repo) -> Expected:
    extra = repo.root / "extra.pub.pem"
    extra.write_bytes(public_key_pem(generate_private_key().public_key()))
    _keys("add", "--keyring", str(repo.root / "keyring"), "--vendor", "cpu",
          "--public-key", str(extra))
    extra.unlink()
    return Expected(None, TRUST_CHECK, "keyring.json.sig is missing")


def key_file_dropped_into_the_keyring(repo: Repo) -> Expected:
    key = generate_private_key().public_key()
    (repo.root / "keyring" / "cpu" / f"{keyid_of(key)}.pub.pem").write_bytes(public_key_pem(key))
    return Expected(None, TRUST_CHECK, "1 key file(s) not in the root-signed keyring.json")


def report_from_a_locally_modified_kit(repo: Repo) -> Expected:
    def modified_kit(report: dict[str, object]) -> None:
        report["kit"]["digest"] = "0" * 63 + "1"  # type: ignore[index]

    key = _resign_and_refile(repo, "cpu", modified_kit)
    return Expected(key, POLICY, "kit 0.1.0 with digest 0000000000000000 is not a released kit",
                    first=False)


ATTACKS: list[Callable[[Repo], Expected]] = [
    revoked_key,
    key_expired_before_the_run,
    keyring_entry_added_without_root_signature,
    key_file_dropped_into_the_keyring,
    report_from_a_locally_modified_kit,
]


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda attack: attack.__name__)
def test_trust_attack_fails_the_audit_with_its_line(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    attack: Callable[[Repo], Expected],
) -> None:
    repo = _copy(shared, tmp_path / "repo")
    expected = attack(repo)
    assert main(["audit", str(repo.root), *shared.audit_args]) == ExitCode.VERIFICATION_FAILED
    out = capsys.readouterr().out
    number = f"  {expected.number}. ✗ "
    assert [line for line in out.splitlines()
            if line.startswith(number) and expected.why in line], out


def test_the_honest_repository_passes_with_the_auditors_trust(
    shared: SharedRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", str(shared.checkout), *shared.audit_args]) == ExitCode.OK
    out = capsys.readouterr().out
    assert f"  {TRUST_CHECK}. ✓ " in out
    assert f"  {KEY}. ✓ " in out


def test_without_pinned_roots_the_audit_fails(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "no-roots"
    empty.mkdir()
    args = ["--trust-roots", str(empty), *shared.audit_args[2:]]
    assert main(["audit", str(shared.checkout), *args]) == ExitCode.VERIFICATION_FAILED
    assert f"  {TRUST_CHECK}. ✗ " in capsys.readouterr().out


def test_gate_and_portal_read_the_same_audit(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["gate", "--release", "2.13", str(shared.checkout), *shared.audit_args])
    out = capsys.readouterr().out
    # Narrowed runs are below the bar, but fresh (72 hours to fix); no vendor is required, so
    # the gate has nothing to judge and stays closed.
    assert code == ExitCode.GATE_NOTHING_TO_JUDGE, out
    assert "closed: the gate policy requires no vendor" in out
    assert [line for line in out.splitlines() if line.startswith("cpu") and "fixing" in line]
    assert [line for line in out.splitlines() if line.startswith("simnpu") and "fixing" in line]
    assert main(["portal", str(shared.checkout), "-o", str(tmp_path / "site"),
                 *shared.audit_args]) == ExitCode.OK
    index = (tmp_path / "site" / "index.html").read_text()
    assert "cpu" in index and "simnpu" in index
