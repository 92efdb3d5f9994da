"""Sign then verify: the accepted path, the unsigned (--no-sign) path, and what sign refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from signing_helpers import REPORT, VENDOR, SignedRun, honest_report, write_report_files

import kit
from kit.errors import InputError, VerificationError
from kit.hashing import sha256_file
from kit.rundir import ENVELOPE_NAME, report_files
from kit.signing.keyring import add_public_key
from kit.signing.keys import generate_private_key, private_key_pem, write_private_key
from kit.signing.sign import (
    default_key_path,
    refuse_changes_since_unsigned_run,
    sign_output_dir,
    write_unsigned_envelope,
)
from kit.signing.statement import PAYLOAD_TYPE, PREDICATE_TYPE, STATEMENT_TYPE
from kit.strict_json import loads_strict
from kit.verification.verify import verify_envelope


def test_round_trip_is_accepted(signed_run: SignedRun) -> None:
    verified = signed_run.verify()
    assert verified.vendor == VENDOR
    assert verified.keyid == signed_run.keyid()
    assert verified.keyids == (signed_run.keyid(),)
    assert verified.report == REPORT
    assert verified.kit_version == kit.__version__
    assert verified.grade_name == REPORT["grade"]["name"] == "non-conformant"
    assert verified.content.vendor_id == VENDOR
    assert verified.notes and verified.notes[0].startswith("not a released kit")
    assert [s.name for s in verified.subjects] == list(report_files())
    for subject in verified.subjects:
        assert subject.sha256 == sha256_file(signed_run.run_dir / subject.name)


def test_envelope_holds_an_in_toto_statement_v1(signed_run: SignedRun) -> None:
    envelope = signed_run.envelope()
    assert envelope.payload_type == PAYLOAD_TYPE
    statement = signed_run.statement()
    assert statement["_type"] == STATEMENT_TYPE
    assert statement["predicateType"] == PREDICATE_TYPE
    assert statement["predicate"] == {"kit_version": kit.__version__, "report": REPORT}
    assert statement["subject"][0] == {
        "name": "report.json",
        "digest": {"sha256": sha256_file(signed_run.run_dir / "report.json")},
    }


def test_verify_accepts_the_run_directory_in_place_of_the_envelope(signed_run: SignedRun) -> None:
    assert verify_envelope(signed_run.run_dir, keyring_dir=signed_run.keyring_dir).vendor == VENDOR


def test_verify_reads_report_files_from_another_directory(
    signed_run: SignedRun, tmp_path: Path
) -> None:
    submission = tmp_path / "submission"
    submission.mkdir()
    envelope = submission / ENVELOPE_NAME
    envelope.write_bytes(signed_run.envelope_path.read_bytes())
    with pytest.raises(VerificationError, match="step 7: subject file report.json is missing"):
        verify_envelope(envelope, keyring_dir=signed_run.keyring_dir)
    verified = verify_envelope(
        envelope, keyring_dir=signed_run.keyring_dir, files_dir=signed_run.run_dir
    )
    assert verified.vendor == VENDOR


def test_encrypted_key_round_trip(run_dir: Path, tmp_path: Path) -> None:
    key = generate_private_key()
    key_path = tmp_path / "keys" / "acme.pem"
    write_private_key(key_path, private_key_pem(key, b"passphrase"), force=False)
    add_public_key(tmp_path / "keyring", VENDOR, key.public_key())
    with pytest.raises(InputError, match="encrypted"):
        sign_output_dir(run_dir, key_path, None)
    assert not (run_dir / ENVELOPE_NAME).exists()
    sign_output_dir(run_dir, key_path, b"passphrase")
    assert verify_envelope(run_dir, keyring_dir=tmp_path / "keyring").vendor == VENDOR


def test_unsigned_envelope_then_sign(run_dir: Path, tmp_path: Path) -> None:
    unsigned = write_unsigned_envelope(run_dir)
    document = json.loads(unsigned.read_text())
    assert document["signatures"] == []
    key = generate_private_key()
    key_path = tmp_path / "acme.pem"
    write_private_key(key_path, private_key_pem(key, None), force=False)
    add_public_key(tmp_path / "keyring", VENDOR, key.public_key())
    with pytest.raises(VerificationError, match="step 3: unsigned report"):
        verify_envelope(unsigned, keyring_dir=tmp_path / "keyring")
    signed = sign_output_dir(run_dir, key_path, None)
    assert loads_strict(signed.read_bytes())["payload"] == document["payload"]
    verify_envelope(signed, keyring_dir=tmp_path / "keyring")


def test_signing_later_refuses_files_changed_since_an_unsigned_run(run_dir: Path) -> None:
    write_unsigned_envelope(run_dir)
    refuse_changes_since_unsigned_run(run_dir)  # untouched: fine
    (run_dir / "summary.md").write_text("# acme: conformant (edited by hand)\n")
    with pytest.raises(InputError, match="summary.md changed since the run wrote report.dsse"):
        refuse_changes_since_unsigned_run(run_dir)


def test_a_rerun_into_the_same_directory_signs_its_new_files(run_dir: Path, tmp_path: Path) -> None:
    """A stale unsigned envelope from an earlier run must not block signing a fresh run."""
    write_unsigned_envelope(run_dir)
    write_report_files(run_dir, honest_report())  # the second run's files
    key = generate_private_key()
    key_path = tmp_path / "acme.pem"
    write_private_key(key_path, private_key_pem(key, None), force=False)
    add_public_key(tmp_path / "keyring", VENDOR, key.public_key())
    sign_output_dir(run_dir, key_path, None)
    assert verify_envelope(run_dir, keyring_dir=tmp_path / "keyring").vendor == VENDOR


def test_sign_with_missing_key_says_how_to_make_one(run_dir: Path, private_config: Path) -> None:
    with pytest.raises(InputError) as caught:
        sign_output_dir(run_dir, default_key_path(VENDOR), None)
    assert str(caught.value).endswith("create one with `ckit keys generate --vendor acme`")


def test_sign_with_missing_explicit_key_names_its_path(run_dir: Path, tmp_path: Path) -> None:
    key_path = tmp_path / "elsewhere.pem"
    with pytest.raises(InputError, match=f"--vendor acme --out {key_path}`$"):
        sign_output_dir(run_dir, key_path, None)


@pytest.mark.parametrize("name", report_files())
def test_sign_refuses_an_incomplete_run(run_dir: Path, tmp_path: Path, name: str) -> None:
    (run_dir / name).unlink()
    with pytest.raises(InputError, match=f"report file {name} is missing"):
        sign_output_dir(run_dir, tmp_path / "acme.pem", None)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"vendor": {"id": "acme"}, "vendor": {"id": "beta"}}', "duplicate key 'vendor'"),
        (b'{"vendor": {"id": "acme"}, "score": NaN}', "non-finite number NaN"),
        (b'{"kit": {}}', "report has no vendor.id"),
    ],
    ids=["duplicate_keys", "nan", "no_vendor"],
)
def test_sign_refuses_a_report_it_could_not_verify(
    run_dir: Path, tmp_path: Path, content: bytes, message: str
) -> None:
    (run_dir / "report.json").write_bytes(content)
    with pytest.raises(InputError, match=message):
        sign_output_dir(run_dir, tmp_path / "acme.pem", None)
