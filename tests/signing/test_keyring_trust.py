"""A keyring with trust roots: only keys listed in a root-signed keyring.json vouch for reports.

Every test starts from a real signed report (``make_signed_run``), a real root key pinned in a
roots directory outside the keyring, and a keyring.json signed by that root. Attacks change one
thing and must be refused with their own one line: by ``load_trusted_keyring`` when the manifest
itself no longer holds, by ``verify_envelope`` step 4 or 6 when a key may not vouch for the
report.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from signing_helpers import REPORT, VENDOR, SignedRun, make_signed_run

from kit.errors import InputError, VerificationError
from kit.signing.dsse import Envelope
from kit.signing.keyring import (
    MANIFEST_NAME,
    MANIFEST_PAYLOAD_TYPE,
    MANIFEST_SIGNATURE_NAME,
    KeyringManifest,
    KeyStatus,
    ManifestEntry,
    add_public_key,
    sign_manifest,
    write_manifest,
)
from kit.signing.keys import generate_private_key, keyid_of, public_key_pem
from kit.signing.sign import sign_output_dir, sign_payload
from kit.signing.trust import TrustedKeyring, load_trusted_keyring
from kit.verification.verify import VerifiedReport, verify_envelope

#: When the fixture report says it was signed (its run.finished_at).
SIGNED_AT = dt.datetime.fromisoformat(REPORT["run"]["finished_at"])
HOUR = dt.timedelta(hours=1)
KEYID = r"[0-9a-f]{16}"


@dataclass
class TrustedRun:
    """A signed run plus pinned roots and the keyring.json that lists its key."""

    run: SignedRun
    roots_dir: Path
    roots: list[Ed25519PrivateKey] = field(default_factory=list)

    def add_root(self) -> Ed25519PrivateKey:
        key = generate_private_key()
        name = f"{keyid_of(key.public_key())}.pub.pem"
        (self.roots_dir / name).write_bytes(public_key_pem(key.public_key()))
        self.roots.append(key)
        return key

    def set_threshold(self, threshold: int) -> None:
        (self.roots_dir / "roots.yaml").write_text(f"threshold: {threshold}\n")

    def entry(self, name: str = VENDOR, vendor: str = VENDOR, **changes: object) -> ManifestEntry:
        honest = ManifestEntry(
            vendor=vendor,
            keyid=self.run.keyid(name),
            not_before=SIGNED_AT - dt.timedelta(days=30),
            not_after=SIGNED_AT + dt.timedelta(days=365),
            status=KeyStatus.ACTIVE,
        )
        return dataclasses.replace(honest, **changes)  # type: ignore[arg-type]

    def publish(self, *entries: ManifestEntry) -> None:
        """Write keyring.json listing ``entries`` and have every root sign it."""
        write_manifest(self.run.keyring_dir, KeyringManifest(entries=entries))
        for root in self.roots:
            sign_manifest(self.run.keyring_dir, root)

    @property
    def manifest_path(self) -> Path:
        return self.run.keyring_dir / MANIFEST_NAME

    @property
    def signature_path(self) -> Path:
        return self.run.keyring_dir / MANIFEST_SIGNATURE_NAME

    def write_signature(self, *signers: Ed25519PrivateKey) -> None:
        """keyring.json.sig over the current keyring.json, signed by exactly ``signers``."""
        data = self.manifest_path.read_bytes()
        signatures = tuple(sign_payload(key, MANIFEST_PAYLOAD_TYPE, data) for key in signers)
        envelope = Envelope(MANIFEST_PAYLOAD_TYPE, data, signatures)
        self.signature_path.write_bytes(envelope.to_bytes())

    def trusted(self) -> TrustedKeyring:
        return load_trusted_keyring(self.run.keyring_dir, self.roots_dir)

    def verify(self) -> VerifiedReport:
        return verify_envelope(self.run.envelope_path, trusted=self.trusted())


@pytest.fixture
def trusted_run(tmp_path: Path) -> TrustedRun:
    run = make_signed_run(tmp_path / "signed")
    roots_dir = tmp_path / "verifier" / "roots"  # pinned by the verifier, outside the keyring
    roots_dir.mkdir(parents=True)
    setup = TrustedRun(run=run, roots_dir=roots_dir)
    setup.add_root()
    setup.publish(setup.entry())
    return setup


def test_honest_trusted_keyring_verifies(trusted_run: TrustedRun) -> None:
    verified = trusted_run.verify()
    assert verified.vendor == VENDOR
    assert verified.keyids == (trusted_run.run.keyid(),)
    trusted = trusted_run.trusted()
    assert trusted.root_signers == (keyid_of(trusted_run.roots[0].public_key()),)
    assert trusted.unlisted_key_files() == ()
    assert trusted.key_problem(trusted_run.run.keyid(), VENDOR, SIGNED_AT) is None


def test_threshold_of_two_met_by_two_distinct_roots_verifies(trusted_run: TrustedRun) -> None:
    trusted_run.add_root()
    trusted_run.set_threshold(2)
    trusted_run.publish(trusted_run.entry())
    assert len(trusted_run.trusted().root_signers) == 2
    assert trusted_run.verify().vendor == VENDOR


def test_report_signed_before_retirement_still_verifies(trusted_run: TrustedRun) -> None:
    retired = trusted_run.entry(status=KeyStatus.RETIRED, changed_at=SIGNED_AT + HOUR)
    trusted_run.publish(retired)
    assert trusted_run.verify().vendor == VENDOR


def test_plain_keyring_verification_is_unchanged(trusted_run: TrustedRun) -> None:
    """Without ``trusted``, a vendor checking its own run needs no manifest at all."""
    trusted_run.manifest_path.unlink()
    trusted_run.signature_path.unlink()
    assert trusted_run.run.verify().vendor == VENDOR


# Attacks on the manifest: load_trusted_keyring refuses the whole keyring --------------------

ManifestAttack = Callable[[TrustedRun], None]


def keyring_entry_added_without_root_signature(setup: TrustedRun) -> None:
    _, intruder_path = setup.run.new_key("intruder", vendor=VENDOR)  # files the .pub.pem
    document = json.loads(setup.manifest_path.read_text())
    document["keys"].append(setup.entry("intruder").to_json())
    setup.manifest_path.write_text(json.dumps(document, indent=2) + "\n")
    assert intruder_path.is_file()


def revoked_key_revived_by_editing_the_manifest(setup: TrustedRun) -> None:
    setup.publish(setup.entry(status=KeyStatus.REVOKED, changed_at=SIGNED_AT, reason="leaked"))
    document = json.loads(setup.manifest_path.read_text())
    document["keys"][0].update(status="active", changed_at=None, reason=None)
    setup.manifest_path.write_text(json.dumps(document, indent=2) + "\n")


def manifest_signed_by_a_vendor_key_instead_of_a_root(setup: TrustedRun) -> None:
    setup.write_signature(setup.run.private_key(VENDOR))


def threshold_of_two_met_by_the_same_root_twice(setup: TrustedRun) -> None:
    setup.add_root()
    setup.set_threshold(2)
    setup.write_signature(setup.roots[0], setup.roots[0])


def threshold_of_two_with_one_root_signature(setup: TrustedRun) -> None:
    setup.add_root()
    setup.set_threshold(2)
    setup.write_signature(setup.roots[0])


def duplicate_entries_signed_by_the_root(setup: TrustedRun) -> None:
    entry = setup.entry().to_json()
    document = {"version": 1, "keys": [entry, dict(entry, status="active")]}
    setup.manifest_path.write_text(json.dumps(document, indent=2) + "\n")
    setup.write_signature(setup.roots[0])


def keyring_json_sig_missing(setup: TrustedRun) -> None:
    setup.signature_path.unlink()


def listed_key_file_missing(setup: TrustedRun) -> None:
    (setup.run.keyring_dir / VENDOR / f"{setup.run.keyid()}.pub.pem").unlink()


def root_signature_over_other_bytes_relabelled(setup: TrustedRun) -> None:
    """A root's real signature, taken from another manifest, pasted over this one."""
    other = Envelope(MANIFEST_PAYLOAD_TYPE, b"{}", ())
    forged = sign_payload(setup.roots[0], MANIFEST_PAYLOAD_TYPE, other.payload)
    data = setup.manifest_path.read_bytes()
    envelope = Envelope(MANIFEST_PAYLOAD_TYPE, data, (forged,))
    setup.signature_path.write_bytes(envelope.to_bytes())


MANIFEST_ATTACKS: list[tuple[ManifestAttack, str]] = [
    (
        keyring_entry_added_without_root_signature,
        r"keyring\.json changed after it was signed: keyring\.json\.sig covers other bytes "
        r"\(a root must sign it again\)",
    ),
    (
        revoked_key_revived_by_editing_the_manifest,
        r"keyring\.json changed after it was signed: .*",
    ),
    (
        manifest_signed_by_a_vendor_key_instead_of_a_root,
        rf"keyring\.json\.sig is signed by key {KEYID}, a key of vendor acme, which is not a "
        r"trust root in .*roots",
    ),
    (
        threshold_of_two_met_by_the_same_root_twice,
        rf"root {KEYID} signs keyring\.json twice; the threshold counts distinct roots",
    ),
    (
        threshold_of_two_with_one_root_signature,
        r"keyring\.json has 1 root signature\(s\); the roots in .*roots need 2",
    ),
    (
        duplicate_entries_signed_by_the_root,
        rf"keyring\.json lists key {KEYID} twice \(entries 0 and 1\); a key has one entry",
    ),
    (
        keyring_json_sig_missing,
        r"keyring\.json\.sig is missing from .*: keyring\.json is not signed by a trust root",
    ),
    (
        listed_key_file_missing,
        rf"keyring\.json lists key {KEYID} of vendor acme but its file acme/[0-9a-f]{{64}}"
        r"\.pub\.pem is missing",
    ),
    (
        root_signature_over_other_bytes_relabelled,
        rf"keyring\.json\.sig: the signature of root {KEYID} does not verify over keyring\.json",
    ),
]


@pytest.mark.parametrize(
    ("attack", "message"), MANIFEST_ATTACKS, ids=[a.__name__ for a, _ in MANIFEST_ATTACKS]
)
def test_manifest_attack_is_refused(
    trusted_run: TrustedRun, attack: ManifestAttack, message: str
) -> None:
    attack(trusted_run)
    with pytest.raises(VerificationError) as refused:
        trusted_run.trusted()
    assert "\n" not in str(refused.value)
    assert re.fullmatch(message, str(refused.value)), str(refused.value)


def test_roots_inside_the_keyring_are_refused(trusted_run: TrustedRun) -> None:
    planted = trusted_run.run.keyring_dir / "roots"
    trusted_run.roots_dir.rename(planted)
    with pytest.raises(VerificationError, match=r"^trust roots .* lie inside the keyring .*"):
        load_trusted_keyring(trusted_run.run.keyring_dir, planted)


@pytest.mark.parametrize(
    ("roots_yaml", "problem"),
    [
        ("threshold: '2'\n", "threshold: expected a whole number of root signatures >= 1, got '2'"),
        ("threshold: 0\n", "threshold: expected a whole number of root signatures >= 1, got 0"),
        ("threshold: 2\n", "threshold: 2 exceeds the 1 root key\\(s\\) beside it"),
        ("threshold: 1\nquorum: 1\n", "quorum: unknown key; the keys here are threshold"),
    ],
    ids=["quoted", "zero", "more-than-the-roots", "unknown-key"],
)
def test_malformed_roots_yaml_is_refused_naming_the_file_and_key(
    trusted_run: TrustedRun, roots_yaml: str, problem: str
) -> None:
    path = trusted_run.roots_dir / "roots.yaml"
    path.write_text(roots_yaml, encoding="utf-8")
    with pytest.raises(VerificationError) as refused:
        trusted_run.trusted()
    assert re.fullmatch(f"bad trust roots: {re.escape(str(path))}: {problem}", str(refused.value))


# Attacks on the report: verify_envelope refuses at step 4 or step 6 ------------------------

ReportAttack = Callable[[TrustedRun], None]


def key_of_vendor_a_on_vendor_b_report(setup: TrustedRun) -> None:
    setup.run.new_key("beta", vendor="beta")
    setup.publish(setup.entry(), setup.entry("beta", vendor="beta"))
    report_path = setup.run.run_dir / "report.json"
    report = json.loads(report_path.read_text())
    report["vendor"]["id"] = "beta"
    report_path.write_text(json.dumps(report))
    sign_output_dir(setup.run.run_dir, setup.run.key_paths[VENDOR], None)


def revoked_key(setup: TrustedRun) -> None:
    setup.publish(
        setup.entry(status=KeyStatus.REVOKED, changed_at=SIGNED_AT + HOUR, reason="key leaked")
    )


def report_signed_after_the_keys_not_after(setup: TrustedRun) -> None:
    setup.publish(setup.entry(not_after=SIGNED_AT - HOUR))


def report_signed_before_the_keys_not_before(setup: TrustedRun) -> None:
    setup.publish(setup.entry(not_before=SIGNED_AT + HOUR, not_after=SIGNED_AT + 2 * HOUR))


def report_signed_by_a_retired_key_after_retirement(setup: TrustedRun) -> None:
    setup.publish(setup.entry(status=KeyStatus.RETIRED, changed_at=SIGNED_AT - HOUR))


def pub_pem_dropped_in_without_a_manifest_entry(setup: TrustedRun) -> None:
    _, stray_key = setup.run.new_key("stray", vendor=VENDOR)  # the file only, no entry
    sign_output_dir(setup.run.run_dir, stray_key, None)


REPORT_ATTACKS: list[tuple[ReportAttack, int, str]] = [
    (
        key_of_vendor_a_on_vendor_b_report,
        6,
        rf"key {KEYID} of vendor acme signed a report claiming vendor 'beta'",
    ),
    (
        revoked_key,
        4,
        rf"key {KEYID} of vendor acme was revoked at \S+Z \(key leaked\); it is refused "
        r"whatever the report's date",
    ),
    (
        report_signed_after_the_keys_not_after,
        6,
        rf"report signed at \S+Z, after key {KEYID} of vendor acme expired \(\S+Z\)",
    ),
    (
        report_signed_before_the_keys_not_before,
        6,
        rf"report signed at \S+Z, before key {KEYID} of vendor acme is valid \(\S+Z\)",
    ),
    (
        report_signed_by_a_retired_key_after_retirement,
        6,
        rf"report signed at \S+Z, after key {KEYID} of vendor acme was retired \(\S+Z\)",
    ),
    (
        pub_pem_dropped_in_without_a_manifest_entry,
        4,
        rf"key {KEYID} is filed as .*\.pub\.pem but not listed in the signed keyring\.json",
    ),
]


@pytest.mark.parametrize(
    ("attack", "step", "message"), REPORT_ATTACKS, ids=[a.__name__ for a, _, _ in REPORT_ATTACKS]
)
def test_report_attack_is_refused(
    trusted_run: TrustedRun, attack: ReportAttack, step: int, message: str
) -> None:
    attack(trusted_run)
    with pytest.raises(VerificationError) as refused:
        trusted_run.verify()
    assert "\n" not in str(refused.value)
    assert re.fullmatch(rf"step {step}: {message}", str(refused.value)), str(refused.value)


def test_dropped_in_key_file_is_reported_unlisted(trusted_run: TrustedRun) -> None:
    pub_pem_dropped_in_without_a_manifest_entry(trusted_run)
    stray = trusted_run.run.keyring_dir / VENDOR / f"{trusted_run.run.keyid('stray')}.pub.pem"
    assert trusted_run.trusted().unlisted_key_files() == (stray,)


def test_key_listed_for_vendor_a_has_a_problem_for_vendor_b(trusted_run: TrustedRun) -> None:
    """The trusted check itself, apart from the keyring's own vendor binding at step 6."""
    problem = trusted_run.trusted().key_problem(trusted_run.run.keyid(), "beta", SIGNED_AT)
    assert problem is not None
    assert re.fullmatch(rf"key {KEYID} is listed for vendor acme, not beta", problem)


def test_trusted_keyring_with_another_keyring_dir_is_refused(
    trusted_run: TrustedRun, tmp_path: Path
) -> None:
    other = tmp_path / "other-keyring"
    add_public_key(other, VENDOR, trusted_run.run.private_key().public_key())
    with pytest.raises(InputError, match=r"^keyring .* is not the trusted keyring .*"):
        verify_envelope(
            trusted_run.run.envelope_path, keyring_dir=other, trusted=trusted_run.trusted()
        )


MALFORMED_ENTRIES: list[tuple[str, dict[str, object], str]] = [
    (
        "time_not_in_utc",
        {"not_after": "2030-01-01T00:00:00+02:00"},
        r"keyring\.json entry 0 not_after '2030-01-01T00:00:00\+02:00' is not in UTC \(end it "
        r"with Z\)",
    ),
    (
        "revoked_without_a_reason",
        {"status": "revoked", "changed_at": "2026-01-01T00:00:00Z"},
        r"keyring\.json entry 0 reason must be a non-empty string of at most 300 characters "
        r"\(a revocation says why\)",
    ),
    (
        "unknown_status",
        {"status": "trusted-forever"},
        r"keyring\.json entry 0 status 'trusted-forever' is not active, retired or revoked",
    ),
    (
        "unknown_field",
        {"also_valid_for": "beta"},
        r"keyring\.json entry 0 has unknown field 'also_valid_for'",
    ),
]


@pytest.mark.parametrize(
    ("change", "message"),
    [(change, message) for _, change, message in MALFORMED_ENTRIES],
    ids=[name for name, _, _ in MALFORMED_ENTRIES],
)
def test_malformed_entry_signed_by_the_root_is_refused(
    trusted_run: TrustedRun, change: dict[str, object], message: str
) -> None:
    document = {"version": 1, "keys": [dict(trusted_run.entry().to_json(), **change)]}
    trusted_run.manifest_path.write_text(json.dumps(document, indent=2) + "\n")
    trusted_run.write_signature(trusted_run.roots[0])
    with pytest.raises(VerificationError) as refused:
        trusted_run.trusted()
    assert re.fullmatch(message, str(refused.value)), str(refused.value)
