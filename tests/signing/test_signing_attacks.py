"""Adversarial envelopes: each attack is rejected at its own step with its own message.

Every attack starts from a correctly signed run (``signed_run``) and changes one thing. Attacks
marked "signed validly" carry a perfectly good signature by a trusted key, so only the checks
after the signature (strict parsing, vendor binding, digests) can stop them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from signing_helpers import VENDOR, SignedRun, make_signed_run

from kit.errors import ExitCode, VerificationError
from kit.rundir import report_files
from kit.signing.dsse import Envelope, Signature
from kit.signing.keys import keyid_of
from kit.signing.sign import sign_output_dir, write_unsigned_envelope
from kit.strict_json import canonical_json

Attack = Callable[[SignedRun], None]


def _flip_middle_byte(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1 :]


def changed_byte_in_payload(run: SignedRun) -> None:
    envelope = run.envelope()
    forged = envelope.payload.replace(b'"non-conformant"', b'"non-conformanT"')
    assert forged != envelope.payload
    run.write_envelope(Envelope(envelope.payload_type, forged, envelope.signatures))


def changed_byte_in_report_file(name: str) -> Attack:
    def attack(run: SignedRun) -> None:
        path = run.run_dir / name
        path.write_bytes(_flip_middle_byte(path.read_bytes()))

    attack.__name__ = f"changed_byte_in_{name.replace('.', '_')}"
    return attack


def subject_file_missing(run: SignedRun) -> None:
    (run.run_dir / "results.csv").unlink()


def signature_by_unknown_key(run: SignedRun) -> None:
    _, outsider_key = run.new_key("outsider", vendor=None)
    sign_output_dir(run.run_dir, outsider_key, None)


def key_of_vendor_a_on_report_claiming_vendor_b(run: SignedRun) -> None:
    run.new_key("beta", vendor="beta")
    report_path = run.run_dir / "report.json"
    report = json.loads(report_path.read_text())
    report["vendor"]["id"] = "beta"
    report_path.write_text(json.dumps(report))
    sign_output_dir(run.run_dir, run.key_paths[VENDOR], None)  # acme's key, beta's report


def duplicate_keys_in_payload_signed_validly(run: SignedRun) -> None:
    # Last-wins parsers read "acme", first-wins parsers read "beta".
    payload = run.envelope().payload.replace(
        b'"vendor":{"contact"', b'"vendor":{"id":"beta","contact"'
    )
    assert b'"id":"beta"' in payload
    run.sign_raw(payload)


def non_finite_in_payload_signed_validly(constant: str) -> Attack:
    def attack(run: SignedRun) -> None:
        payload = run.envelope().payload.replace(
            b'"max_abs_err":0.00125', b'"max_abs_err":' + constant.encode()
        )
        assert constant.encode() in payload
        run.sign_raw(payload)

    attack.__name__ = f"{constant.lstrip('-').lower()}_in_payload_signed_validly"
    if constant.startswith("-"):
        attack.__name__ = f"negative_{attack.__name__}"
    return attack


def unknown_payload_type_signed_validly(run: SignedRun) -> None:
    run.sign_raw(run.envelope().payload, payload_type="application/json")


def unknown_predicate_type_signed_validly(run: SignedRun) -> None:
    statement = run.statement()
    statement["predicateType"] = "https://example.org/anything-goes/v1"
    run.sign_raw(canonical_json(statement))


def envelope_with_no_signatures(run: SignedRun) -> None:
    write_unsigned_envelope(run.run_dir)


def keyid_in_envelope_not_matching_the_key(run: SignedRun) -> None:
    run.new_key("acme-second", vendor=VENDOR)
    envelope = run.envelope()
    relabelled = Signature(keyid=run.keyid("acme-second"), sig=envelope.signatures[0].sig)
    run.write_envelope(Envelope(envelope.payload_type, envelope.payload, (relabelled,)))


def keyring_file_renamed_to_wrong_keyid(run: SignedRun) -> None:
    public_file = run.keyring_dir / VENDOR / f"{run.keyid()}.pub.pem"
    wrong_keyid = hashlib.sha256(b"some other key").hexdigest()
    public_file.rename(public_file.with_name(f"{wrong_keyid}.pub.pem"))


def same_key_filed_under_two_vendors(run: SignedRun) -> None:
    public_file = run.keyring_dir / VENDOR / f"{run.keyid()}.pub.pem"
    (run.keyring_dir / "beta").mkdir()
    (run.keyring_dir / "beta" / public_file.name).write_bytes(public_file.read_bytes())


def report_json_differs_from_predicate_report_signed_validly(run: SignedRun) -> None:
    report_path = run.run_dir / "report.json"
    report = json.loads(report_path.read_text())
    report["grade"]["name"] = "not-conformant"
    report_path.write_text(json.dumps(report))
    sign_output_dir(run.run_dir, run.key_paths[VENDOR], None)  # subjects now match the files
    statement = run.statement()
    statement["predicate"]["report"]["grade"]["name"] = "conformant"  # the signed claim lies
    run.sign_raw(canonical_json(statement))


def report_json_with_a_number_for_a_boolean_signed_validly(run: SignedRun) -> None:
    # Equal in Python (0 == False), not in JSON: verify compares types too, on either path.
    report_path = run.run_dir / "report.json"
    report = json.loads(report_path.read_text())
    signed = report["kit"]["released"]
    assert isinstance(signed, bool)
    report["kit"]["released"] = int(signed)
    report_path.write_text(json.dumps(report))
    sign_output_dir(run.run_dir, run.key_paths[VENDOR], None)  # subjects now match the files
    statement = run.statement()
    statement["predicate"]["report"]["kit"]["released"] = signed
    run.sign_raw(canonical_json(statement))


def duplicate_keys_in_report_json_signed_validly(run: SignedRun) -> None:
    report_path = run.run_dir / "report.json"
    original = report_path.read_text()
    text = re.sub(r'"grade": ?\{', '"grade":{"name":"failing",', original, count=1)
    assert text != original
    report_path.write_bytes(text.encode())
    statement = run.statement()
    digest = hashlib.sha256(text.encode()).hexdigest()
    for subject in statement["subject"]:
        if subject["name"] == "report.json":
            subject["digest"]["sha256"] = digest
    run.sign_raw(canonical_json(statement))


def subject_list_omits_a_report_file_signed_validly(run: SignedRun) -> None:
    statement = run.statement()
    statement["subject"] = [s for s in statement["subject"] if s["name"] != "summary.md"]
    run.sign_raw(canonical_json(statement))


def subject_name_traverses_out_of_the_run_dir_signed_validly(run: SignedRun) -> None:
    statement = run.statement()
    statement["subject"][1]["name"] = "../../etc/passwd"
    run.sign_raw(canonical_json(statement))


def signature_replayed_twice(run: SignedRun) -> None:
    envelope = run.envelope()
    doubled = envelope.signatures * 2
    run.write_envelope(Envelope(envelope.payload_type, envelope.payload, doubled))


def truncated_envelope(run: SignedRun) -> None:
    data = run.envelope_path.read_bytes()
    run.envelope_path.write_bytes(data[: len(data) // 2])


def extra_field_in_envelope(run: SignedRun) -> None:
    document = run.envelope().to_json()
    document["payloadType_note"] = "trust me"
    run.envelope_path.write_text(json.dumps(document))


def url_safe_base64_signature(run: SignedRun) -> None:
    document = run.envelope().to_json()
    sig = document["signatures"][0]["sig"]
    document["signatures"][0]["sig"] = sig.replace("+", "-").replace("/", "_").rstrip("=") + "-"
    run.envelope_path.write_text(json.dumps(document))


def private_key_dropped_into_keyring(run: SignedRun) -> None:
    stray = run.keyring_dir / VENDOR / f"{run.keyid()}.pub.pem"
    stray.write_bytes(run.key_paths[VENDOR].read_bytes())


#: (attack, the step that must stop it, a pattern of its message)
ATTACKS: list[tuple[Attack, int, str]] = [
    (changed_byte_in_payload, 4, r"signature does not verify with key [0-9a-f]{16} of vendor acme"),
    *[
        (changed_byte_in_report_file(name), 7, rf"{re.escape(name)} was modified after signing")
        for name in report_files()
    ],
    (subject_file_missing, 7, r"subject file results\.csv is missing from "),
    (signature_by_unknown_key, 4, r"signing key [0-9a-f]{16} is not in the keyring .*unknown key"),
    (
        key_of_vendor_a_on_report_claiming_vendor_b,
        6,
        r"key [0-9a-f]{16} of vendor acme signed a report claiming vendor 'beta'",
    ),
    (duplicate_keys_in_payload_signed_validly, 5, r"payload: duplicate key 'id'"),
    *[
        (non_finite_in_payload_signed_validly(c), 5, rf"non-finite number {re.escape(c)} is not")
        for c in ("NaN", "Infinity", "-Infinity")
    ],
    (unknown_payload_type_signed_validly, 2, r"unknown payloadType 'application/json'"),
    (unknown_predicate_type_signed_validly, 5, r"unknown predicateType 'https://example\.org/"),
    (envelope_with_no_signatures, 3, r"unsigned report \(written with --no-sign\); sign it with"),
    (
        keyid_in_envelope_not_matching_the_key,
        4,
        r"signature claims key [0-9a-f]{16} of vendor acme but was made by key [0-9a-f]{16}",
    ),
    (keyring_file_renamed_to_wrong_keyid, 4, r"bad keyring: .* file name claims keyid [0-9a-f]+"),
    (same_key_filed_under_two_vendors, 4, r"filed under vendors acme and beta; a key binds to one"),
    (private_key_dropped_into_keyring, 4, r"holds a PRIVATE key; only public keys belong"),
    (
        report_json_differs_from_predicate_report_signed_validly,
        8,
        r"report\.json is not the signed report as the kit writes it .*'grade'",
    ),
    (
        report_json_with_a_number_for_a_boolean_signed_validly,
        8,
        r"report\.json is not the signed report as the kit writes it .*'kit'",
    ),
    (duplicate_keys_in_report_json_signed_validly, 8, r"report\.json: duplicate key 'name'"),
    (subject_list_omits_a_report_file_signed_validly, 5, r"statement lacks subject 'summary\.md'"),
    (
        subject_name_traverses_out_of_the_run_dir_signed_validly,
        5,
        r"unexpected subject '\.\./\.\./etc/passwd'",
    ),
    (signature_replayed_twice, 4, r"key [0-9a-f]{16} signs the envelope twice"),
    (truncated_envelope, 1, r"envelope: invalid JSON: "),
    (extra_field_in_envelope, 1, r"envelope has unknown field 'payloadType_note'"),
    (url_safe_base64_signature, 1, r"signatures\[0\]\.sig is not valid base64"),
]


@pytest.mark.parametrize(
    ("attack", "step", "pattern"), ATTACKS, ids=[attack.__name__ for attack, _, _ in ATTACKS]
)
def test_attack_is_rejected_at_its_step(
    signed_run: SignedRun, attack: Attack, step: int, pattern: str
) -> None:
    signed_run.verify()  # the untouched run is accepted: the attack alone causes the rejection
    attack(signed_run)
    with pytest.raises(VerificationError) as caught:
        signed_run.verify()
    message = str(caught.value)
    assert message.startswith(f"step {step}: ")
    assert re.search(pattern, message), message
    assert "\n" not in message
    assert caught.value.exit_code is ExitCode.VERIFICATION_FAILED


def test_every_attack_gets_its_own_message(tmp_path: Path) -> None:
    messages: dict[str, str] = {}
    for index, (attack, _, _) in enumerate(ATTACKS):
        run = make_signed_run(tmp_path / str(index))
        attack(run)
        with pytest.raises(VerificationError) as caught:
            run.verify()
        # Hex digests and temporary paths vary per run; the wording must not.
        wording = re.sub(r"[0-9a-f]{16,}|/\S+", "X", str(caught.value))
        messages[attack.__name__] = wording
    duplicates = {m for m in messages.values() if list(messages.values()).count(m) > 1}
    assert not duplicates, {name: m for name, m in messages.items() if m in duplicates}


def test_relabelled_keyid_names_the_actual_signer(signed_run: SignedRun) -> None:
    keyid_in_envelope_not_matching_the_key(signed_run)
    actual_signer = f"made by key {signed_run.keyid()[:16]} of vendor acme$"
    with pytest.raises(VerificationError, match=actual_signer):
        signed_run.verify()


def test_signature_from_a_key_that_is_not_ed25519_sized_is_rejected(signed_run: SignedRun) -> None:
    envelope = signed_run.envelope()
    short = Signature(keyid=envelope.signatures[0].keyid, sig=envelope.signatures[0].sig[:32])
    signed_run.write_envelope(Envelope(envelope.payload_type, envelope.payload, (short,)))
    with pytest.raises(VerificationError, match=r"^step 4: signature does not verify"):
        signed_run.verify()


def test_second_signature_by_unknown_key_rejects_the_envelope(signed_run: SignedRun) -> None:
    """Every signature must verify: an extra unverifiable one is tampering, not decoration."""
    outsider, _ = signed_run.new_key("outsider", vendor=None)
    envelope = signed_run.envelope()
    extra = Signature(keyid=keyid_of(outsider.public_key()), sig=envelope.signatures[0].sig)
    signed_run.write_envelope(
        Envelope(envelope.payload_type, envelope.payload, (*envelope.signatures, extra))
    )
    with pytest.raises(VerificationError, match=r"^step 4: signing key .* not in the keyring"):
        signed_run.verify()


def test_a_statement_signed_in_another_json_layout_still_verifies(signed_run: SignedRun) -> None:
    """The kit signs canonical JSON, which verify compares fast; any other layout of the same
    statement is compared the long way, and holds as well."""
    signed_run.sign_raw(json.dumps(signed_run.statement(), indent=1).encode())
    assert signed_run.verify().report["kit"] == json.loads(
        (signed_run.run_dir / "report.json").read_text())["kit"]
