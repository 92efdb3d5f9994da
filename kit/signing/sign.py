"""Signing a run's output directory: hash the report files, wrap them in a statement, sign."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from kit.bounded_read import FileMissing, read_regular_file
from kit.errors import InputError, VerificationError
from kit.hashing import sha256_bytes, sha256_file
from kit.report.body import decode_body
from kit.rundir import (
    BODY_FILES,
    MAX_SUBJECT_BYTES,
    OPTIONAL_REPORT_FILES,
    REPORT_JSON,
    RunDir,
    report_files,
)
from kit.signing.body_statement import (
    BodyStatement,
    build_body_statement,
    is_body_statement,
    parse_body_statement,
)
from kit.signing.dsse import Envelope, Signature, decode_envelope, pae
from kit.signing.keys import default_key_path, keyid_of, load_private_key, write_atomically
from kit.signing.statement import PAYLOAD_TYPE, Subject, build_statement, parse_statement
from kit.strict_json import canonical_json, loads_strict

__all__ = [
    "default_key_path",
    "refuse_changes_since_unsigned_run",
    "report_vendor_id",
    "sign_output_dir",
    "write_unsigned_envelope",
]


def _report_file(out_dir: Path, name: str) -> Path:
    path = out_dir / name
    if not path.is_file():
        raise InputError(f"{out_dir}: report file {name} is missing; sign a complete run directory")
    return path


def _vendor_id(report: Any, source: Path) -> str:
    vendor = report.get("vendor") if isinstance(report, dict) else None
    vendor_id = vendor.get("id") if isinstance(vendor, dict) else None
    if not isinstance(vendor_id, str):
        raise InputError(f"{source}: report has no vendor.id")
    return vendor_id


def _read_report(out_dir: Path) -> tuple[bytes, dict[str, Any]]:
    """The exact bytes that get hashed are the bytes that get parsed (no re-read in between)."""
    path = _report_file(out_dir, REPORT_JSON)
    data = path.read_bytes()
    report = loads_strict(data, what=str(path), error=InputError)
    _vendor_id(report, path)
    return data, report


def is_body_run(out_dir: Path) -> bool:
    """Whether ``out_dir`` holds a ``body``-format report (its standard's ``report_format``)."""
    return RunDir(out_dir).holds_body()


def report_vendor_id(out_dir: Path) -> str:
    """The vendor a run's report (``report.json`` or the body's head) claims."""
    if is_body_run(out_dir):
        return _body_statement(out_dir).claim.vendor_id
    _, report = _read_report(out_dir)
    return _vendor_id(report, RunDir(out_dir).report_json)


def _subject(out_dir: Path, name: str, report_bytes: bytes) -> Subject:
    if name == REPORT_JSON:
        return Subject(name=name, sha256=sha256_bytes(report_bytes))
    return Subject(name=name, sha256=sha256_file(_report_file(out_dir, name)))


def signed_files(out_dir: Path) -> tuple[str, ...]:
    """Every report format's file, and each optional one the run wrote."""
    present = (name for name in OPTIONAL_REPORT_FILES if (out_dir / name).is_file())
    return (*report_files(), *present)


def _body_file(out_dir: Path, name: str) -> bytes:
    """A body file as the verifier will read it (regular, bounded): one it would refuse is
    refused here, before anything is signed."""
    try:
        return read_regular_file(out_dir / name, limit=MAX_SUBJECT_BYTES, what="body file")
    except FileMissing:
        raise InputError(f"{out_dir}: body file {name} is missing; nothing signed") from None
    except InputError as exc:
        raise InputError(f"{out_dir}: nothing signed: {exc}") from None


def _body_statement(out_dir: Path) -> BodyStatement:
    """The body's statement; the body is read strictly first (``decode_body``), so a body a
    verifier would refuse (a duplicate key, another spelling) is never signed."""
    files = {name: _body_file(out_dir, name) for name in BODY_FILES}
    optional = [name for name in OPTIONAL_REPORT_FILES if (out_dir / name).is_file()]
    subjects = [Subject(name, sha256_bytes(data)) for name, data in files.items()]
    subjects += [Subject(name, sha256_file(out_dir / name)) for name in optional]
    try:
        return build_body_statement(subjects, decode_body(files).head)
    except VerificationError as exc:
        raise InputError(f"{out_dir}: nothing signed: {exc}") from None


def statement_payload(out_dir: Path) -> tuple[bytes, str]:
    """The canonical in-toto statement for ``out_dir`` and the vendor its report claims."""
    if is_body_run(out_dir):
        body = _body_statement(out_dir)
        return canonical_json(body.to_json()), body.claim.vendor_id
    report_bytes, report = _read_report(out_dir)
    subjects = [_subject(out_dir, name, report_bytes) for name in signed_files(out_dir)]
    statement = build_statement(subjects, report)
    return canonical_json(statement.to_json()), statement.vendor_id


def sign_payload(private_key: Ed25519PrivateKey, payload_type: str, payload: bytes) -> Signature:
    signature = private_key.sign(pae(payload_type, payload))
    return Signature(keyid=keyid_of(private_key.public_key()), sig=signature)


def _write_envelope(out_dir: Path, envelope: Envelope) -> Path:
    path = RunDir(out_dir).envelope
    write_atomically(path, envelope.to_bytes(), mode=0o644)
    return path


def _missing_key_hint(key_path: Path, vendor_id: str) -> str:
    out = "" if key_path == default_key_path(vendor_id) else f" --out {key_path}"
    command = f"ckit keys generate --vendor {vendor_id}{out}"
    return f"no signing key at {key_path}; create one with `{command}`"


def _subjects_of(payload: bytes) -> dict[str, str]:
    document = loads_strict(payload)
    subjects = (parse_body_statement(document).subjects if is_body_statement(document) else
                parse_statement(document, report_files(), OPTIONAL_REPORT_FILES).subjects)
    return {subject.name: subject.sha256 for subject in subjects}


def refuse_changes_since_unsigned_run(out_dir: Path) -> None:
    """After ``--no-sign``, ``ckit sign`` signs only the files the run wrote, not later edits.

    The unsigned envelope proves nothing to a verifier, but it catches honest mistakes: a report
    file edited or regenerated between the run and the signing.
    """
    path = RunDir(out_dir).envelope
    if not path.is_file():
        return
    try:
        envelope = decode_envelope(loads_strict(path.read_bytes()))
        recorded = _subjects_of(envelope.payload)
    except VerificationError:
        return  # not an envelope we can read; nothing recorded to compare with
    if envelope.signatures:
        return
    current = _subjects_of(statement_payload(out_dir)[0])
    names = (*report_files(), *BODY_FILES, *OPTIONAL_REPORT_FILES)
    changed = [name for name in names if recorded.get(name) != current.get(name)]
    if changed:
        raise InputError(
            f"{out_dir}: {changed[0]} changed since the run wrote {path.name}; "
            "only unmodified run output can be signed"
        )


def sign_output_dir(out_dir: Path, key_path: Path, passphrase: bytes | None) -> Path:
    """Sign the report files of ``out_dir`` (and its golden manifest, if any); returns the
    written envelope's path."""
    payload, vendor_id = statement_payload(out_dir)
    if not key_path.exists():
        raise InputError(_missing_key_hint(key_path, vendor_id))
    private_key = load_private_key(key_path, passphrase)
    signature = sign_payload(private_key, PAYLOAD_TYPE, payload)
    return _write_envelope(out_dir, Envelope(PAYLOAD_TYPE, payload, (signature,)))


def write_unsigned_envelope(out_dir: Path) -> Path:
    """The ``--no-sign`` envelope: the same statement, no signatures; ``ckit sign`` completes it."""
    payload, _ = statement_payload(out_dir)
    return _write_envelope(out_dir, Envelope(PAYLOAD_TYPE, payload, ()))
