"""Attacks on the repository's history, in real git clones of the shared origin: restoring an
older, validly signed keyring (repository check 3) and deleting what was submitted (repository
check 4, with ``--changed-since``). History is append-only for auditors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from repository_helpers import TEST_AUTHOR, SharedRepo, git

from kit.cli import main
from kit.errors import ExitCode
from kit.repository.audit import DELETION_CHECK, TRUST_CHECK, audit_repository
from kit.repository.layout import SubmissionKey
from kit.repository.submission_checks import KEY
from kit.signing.keyring import MANIFEST_NAME, MANIFEST_SIGNATURE_NAME, parse_manifest
from kit.signing.keys import keyid_of, load_private_key

SINCE = ["--changed-since", "origin/main"]


def _clone(shared: SharedRepo, work: Path, *options: str) -> Path:
    git(["clone", "--quiet", *options, shared.origin.as_uri(), str(work)], work.parent)
    return work


def _commit(work: Path, message: str) -> None:
    git(["add", "-A", "."], work)
    git([*TEST_AUTHOR, "commit", "--quiet", "-m", message], work)


def _failures(out: str, number: int) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(f"  {number}. ✗ ")]


def _audit(work: Path, shared: SharedRepo, capsys: pytest.CaptureFixture[str],
           *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["audit", str(work), *extra, *shared.audit_args])
    return code, capsys.readouterr().out


def _revoke_cpu_key(shared: SharedRepo, work: Path) -> None:
    keyid = keyid_of(load_private_key(shared.keys["cpu"], None).public_key())
    keyring = str(work / "keyring")
    assert main(["keys", "revoke", keyid, "--keyring", keyring, "--reason", "laptop stolen"]) == 0
    assert main(["keys", "sign-keyring", "--keyring", keyring,
                 "--root-key", str(shared.root_key)]) == 0
    _commit(work, "Revoke the cpu key")


def _cpu_submission(work: Path) -> SubmissionKey:
    return next(a.key for a in audit_repository(work).submissions if a.key.vendor == "cpu")


def test_keyring_rollback_to_before_revocation(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = _clone(shared, tmp_path / "work")
    keyring = work / "keyring"
    before = {name: (keyring / name).read_bytes()
              for name in (MANIFEST_NAME, MANIFEST_SIGNATURE_NAME)}
    old = parse_manifest(before[MANIFEST_NAME]).version
    _revoke_cpu_key(shared, work)
    newer = parse_manifest((keyring / MANIFEST_NAME).read_bytes()).version
    for name, data in before.items():  # the older keyring, its root signature still valid
        (keyring / name).write_bytes(data)
    _commit(work, "Restore the keyring")
    code, out = _audit(work, shared, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert [line for line in _failures(out, TRUST_CHECK)
            if f"keyring.json version {old} is older than version {newer}, which the roots "
            "signed in commit" in line], out


def test_keyring_signed_again_after_revocation_is_current(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = _clone(shared, tmp_path / "work")
    _revoke_cpu_key(shared, work)
    version = parse_manifest((work / "keyring" / MANIFEST_NAME).read_bytes()).version
    _, out = _audit(work, shared, capsys)
    assert f"  {TRUST_CHECK}. ✓ " in out
    assert f"keyring.json version {version}; no newer one signed in the history" in out
    assert [line for line in _failures(out, KEY) if "of vendor cpu was revoked" in line], out


def test_shallow_checkout_hides_the_keyring_history(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = _clone(shared, tmp_path / "work", "--depth", "1")
    code, out = _audit(work, shared, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert [line for line in _failures(out, TRUST_CHECK)
            if "the checkout is shallow, so keyring rollbacks cannot be checked" in line], out


def test_submission_deleted_since_the_ref(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = _clone(shared, tmp_path / "work")
    cpu = _cpu_submission(work)
    shutil.rmtree(cpu.directory(work))
    _commit(work, "Drop the cpu submission")
    code, out = _audit(work, shared, capsys, *SINCE)
    assert code == ExitCode.VERIFICATION_FAILED
    assert _failures(out, DELETION_CHECK) == [
        f"  {DELETION_CHECK}. ✗ nothing under submissions/ was deleted since the ref (history "
        f"is append-only): {cpu}/ was deleted since origin/main"
    ], out


def test_required_file_deleted_since_the_ref(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = _clone(shared, tmp_path / "work")
    cpu = _cpu_submission(work)
    (cpu.directory(work) / "results.csv").unlink()
    _commit(work, "Drop a file of the cpu submission")
    code, out = _audit(work, shared, capsys, *SINCE)
    assert code == ExitCode.VERIFICATION_FAILED
    assert [line for line in _failures(out, DELETION_CHECK)
            if line.endswith(f": {cpu}/results.csv was deleted since origin/main")], out


def test_submission_moved_since_the_ref_shows_its_old_path(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = _clone(shared, tmp_path / "work")
    cpu = _cpu_submission(work)
    moved = SubmissionKey("2.12", cpu.vendor, cpu.kit_version, cpu.run_id)
    moved.directory(work).parent.mkdir(parents=True)
    cpu.directory(work).rename(moved.directory(work))
    _commit(work, "Move the cpu submission to another release")
    code, out = _audit(work, shared, capsys, *SINCE)
    assert code == ExitCode.VERIFICATION_FAILED
    assert [line for line in _failures(out, DELETION_CHECK)
            if line.endswith(f": {cpu}/ was deleted since origin/main")], out


def test_nothing_deleted_passes_the_deletion_check(
    shared: SharedRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _audit(shared.checkout, shared, capsys, *SINCE)
    assert code == ExitCode.OK, out
    assert f"  {DELETION_CHECK}. ✓ nothing under submissions/ was deleted" in out
