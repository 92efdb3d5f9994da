"""``ckit verify``: a numbered checklist; the first failed step rejects the envelope.

Integrity: who signed what.

1. read the envelope: a regular file within ``MAX_ENVELOPE_BYTES``, strict JSON, exact DSSE
   shape, at most ``MAX_SIGNATURES`` signatures, a payload within ``MAX_PAYLOAD_BYTES``
2. the payload type is in-toto
3. there is at least one signature
4. every signature is by a keyring key (keyid recomputed from the key) and verifies over PAE
5. the verified payload bytes parse strictly as a Statement v1 with a known predicate type
6. the report's vendor is the keyring vendor of every signing key (with trusted roots, its
   display name is its vendor id or the root-signed keyring's name for it)
7. every subject file (the report files, and the golden manifest when the run wrote one) is a
   regular file in the files directory (no symlink out of it), within
   ``MAX_SUBJECT_BYTES``, and has its signed sha256
8. report.json is, byte for byte, the report inside the statement as a kit writes it (canonical
   JSON, or an older kit's indented layout): never compared by parsed value

Content: whether what was signed holds up (``kit.verification.content`` and
``kit.grading.regrade``).

9. the report names a standard this kit knows, which declares this format (``report-json``:
   a ``body`` standard's reports are checked by ``kit.verification.verify_body``), and
   validates against its report schema, and
   its records' ``details.dispatch`` name only operators of its torch release (where that
   release is the installed torch: ``kit.attribution.op_names``)
10. the kit that judged the run is a released one (listed digest, same version), or the report
    says plainly it is not (then verify prints a note)
11. the run's times are consistent: in order, not before ckit existed, not after this
    verification, and skip expiry judged on a date within the run
12. the report's coverage, completeness, policy violations, summary and grade, derived again
    from its records and its standard, equal what it claims
13. junit.xml, results.csv and summary.md are byte for byte what report.json renders
    (``kit.formats.derived``): a signed summary cannot say what the report does not

With a trusted keyring (``trusted``, see ``kit.signing.trust``), step 4 also requires every
signing key to be listed in the root-signed keyring.json and not revoked, and step 6 requires
each to be listed for the report's vendor and valid (window, retirement) at the report's
signing time, its ``run.finished_at``. Without one, any key file in the keyring counts.

A ``body``-format envelope (``kit.signing.body_statement``) shares steps 1-4, 6 and 7; its
steps 5 and 8-12 are ``kit.verification.verify_body``'s. ``verify_envelope`` takes either and
checks a body's content in full; a reader that records content verdicts uses ``verify_body``.

Each step raises ``VerificationError("step N: ...")`` with one line saying what was wrong. Every
step reads bounded input and does linear work, so a hostile envelope costs little to reject.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from kit.bounded_read import FileMissing, path_within, read_regular_file
from kit.errors import InputError, VerificationError
from kit.formats.derived import derived_differences
from kit.grading.regrade import check_grade
from kit.grading.released import ReleasedKit, load_released_kits
from kit.hashing import sha256_bytes
from kit.printable import printable
from kit.report.model import Report
from kit.rundir import (
    BODY_FILES,
    MAX_SUBJECT_BYTES,
    OPTIONAL_REPORT_FILES,
    REPORT_JSON,
    RunDir,
    report_files,
)
from kit.signing.body_statement import BodyStatement, is_body_statement, parse_body_statement
from kit.signing.dsse import Envelope, Signature, decode_envelope, pae
from kit.signing.keyring import Keyring, KeyringEntry, load_keyring
from kit.signing.keys import KEYID, keyid_of
from kit.signing.limits import MAX_ENVELOPE_BYTES, MAX_PAYLOAD_BYTES, MAX_SIGNATURES
from kit.signing.statement import PAYLOAD_TYPE, Statement, Subject, parse_statement
from kit.signing.trust import TrustedKeyring
from kit.standard import REPORT_JSON_FORMAT, Standard
from kit.strict_json import canonical_json, collector_paused, loads_strict
from kit.verification.body_content import check_body_content
from kit.verification.content import (
    KitStanding,
    check_op_names,
    check_run_times,
    kit_standing,
    report_standard,
)


@dataclass(frozen=True)
class VerifiedReport:
    vendor: str
    #: The first signer's keyid; ``keyids`` lists every signer (all verified, all of ``vendor``).
    keyid: str
    report: dict[str, Any]
    subjects: tuple[Subject, ...]
    kit_version: str
    keyids: tuple[str, ...]
    #: The report as the typed read model; every claim in it passed the content steps.
    content: Report
    kit: KitStanding

    @property
    def grade_name(self) -> str:
        return self.content.grade.name

    @property
    def notes(self) -> tuple[str, ...]:
        """What a reader must know beside the verdict, one line each."""
        return (self.kit.note,) if self.kit.note else ()


def _fail(step: int, message: str) -> NoReturn:
    raise VerificationError(f"step {step}: {message}")


def _short(keyid: str) -> str:
    """Keyids print as 16 hex digits; anything else is quoted so the message stays one line."""
    return keyid[:16] if KEYID.fullmatch(keyid) else repr(keyid[:24])


def _cannot_hold_few_signatures(data: bytes) -> bool:
    """Whether ``data`` is sure to hold more than ``MAX_SIGNATURES`` signatures, unparsed.

    Every JSON object needs a literal ``{``, and an envelope that can pass has no ``{`` anywhere
    else: its strings are base64, keyring keyids and the in-toto type. Counting them rejects a
    padded envelope without first parsing megabytes of signatures strictly.
    """
    return data.count(b"{") > 1 + MAX_SIGNATURES


def step1_read_envelope(path: Path) -> Envelope:
    try:
        data = read_regular_file(path, limit=MAX_ENVELOPE_BYTES, what="envelope")
    except InputError as exc:
        _fail(1, str(exc))
    if _cannot_hold_few_signatures(data):
        _fail(1, f"envelope holds more than {MAX_SIGNATURES} signature objects (at most "
                 f"{MAX_SIGNATURES} are accepted)")
    try:
        envelope = decode_envelope(loads_strict(data, what="envelope"))
    except VerificationError as exc:
        _fail(1, str(exc))
    if len(envelope.payload) > MAX_PAYLOAD_BYTES:
        _fail(1, f"payload is over the limit of {MAX_PAYLOAD_BYTES} bytes")
    return envelope


def step2_check_payload_type(envelope: Envelope) -> None:
    if envelope.payload_type != PAYLOAD_TYPE:
        _fail(2, f"unknown payloadType {envelope.payload_type!r} (expected {PAYLOAD_TYPE})")


def step3_require_signatures(envelope: Envelope) -> None:
    if not envelope.signatures:
        _fail(3, "unsigned report (written with --no-sign); sign it with `ckit sign DIR`")


def _verifies(public_key: Ed25519PublicKey, signature: bytes, message: bytes) -> bool:
    try:
        public_key.verify(signature, message)
    except InvalidSignature:
        return False
    return True


def _load_keyring(keyring_dir: Path | None) -> Keyring:
    try:
        return load_keyring(keyring_dir)
    except InputError as exc:
        _fail(4, f"bad keyring: {exc}")


def _signer(signature: Signature, message: bytes, keyring: Keyring) -> KeyringEntry:
    named = _short(signature.keyid)
    entry = keyring.find(signature.keyid)
    if entry is None:
        _fail(4, f"signing key {named} is not in the keyring {keyring.directory} (unknown key)")
    if keyid_of(entry.public_key) != signature.keyid:
        _fail(4, f"keyring file {entry.path} does not hold key {named}")
    if _verifies(entry.public_key, signature.sig, message):
        return entry
    # Name the real signer when the keyring knows it: a relabelled keyid, not a forgery.
    made_it = (e for e in keyring.entries if _verifies(e.public_key, signature.sig, message))
    actual = next(made_it, None)
    if actual is not None:
        _fail(
            4,
            f"signature claims key {named} of vendor {entry.vendor} but was made by key "
            f"{actual.keyid[:16]} of vendor {actual.vendor}",
        )
    _fail(4, f"signature does not verify with key {named} of vendor {entry.vendor}")


def step4_verify_signatures(
    envelope: Envelope, keyring_dir: Path | None, trusted: TrustedKeyring | None = None
) -> tuple[KeyringEntry, ...]:
    keyring = trusted.keyring if trusted is not None else _load_keyring(keyring_dir)
    message = pae(envelope.payload_type, envelope.payload)
    seen: set[str] = set()
    for signature in envelope.signatures:
        if signature.keyid in seen:
            _fail(4, f"key {_short(signature.keyid)} signs the envelope twice")
        seen.add(signature.keyid)
    signers = tuple(_signer(signature, message, keyring) for signature in envelope.signatures)
    if trusted is not None:
        for signer in signers:
            problem = trusted.standing_problem(signer.keyid)
            if problem is not None:
                _fail(4, problem)
    return signers


def step5_parse_statement(payload: bytes) -> Statement:
    try:
        return parse_statement(
            loads_strict(payload, what="payload"), report_files(), OPTIONAL_REPORT_FILES
        )
    except VerificationError as exc:
        _fail(5, str(exc))


def _signing_time(statement: Statement) -> dt.datetime:
    """The report's ``run.finished_at``: the only signing time the statement offers."""
    run = statement.report.get("run")
    text = run.get("finished_at") if isinstance(run, dict) else None
    try:
        moment = dt.datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        _fail(6, "the report's run.finished_at is not a time with a zone; keys are judged by it")
    return moment


def step6_check_vendor_binding(
    statement: Statement,
    signers: tuple[KeyringEntry, ...],
    trusted: TrustedKeyring | None = None,
) -> None:
    claimed = statement.vendor_id
    for signer in signers:
        if signer.vendor != claimed:
            _fail(
                6,
                f"key {signer.keyid[:16]} of vendor {signer.vendor} signed a report claiming "
                f"vendor {claimed!r}",
            )
    if trusted is None:
        return
    signed_at = _signing_time(statement)
    for signer in signers:
        problem = trusted.key_problem(signer.keyid, claimed, signed_at)
        if problem is not None:
            _fail(6, problem)
    _check_display_name(statement, trusted)


#: Kits write the vendor id as the report's display name since this day; a report signed before
#: it carries its profile's name, which verifies as it did (its summary.md shows what it says).
DISPLAY_NAME_IS_ID_SINCE = dt.datetime(2026, 11, 29, tzinfo=dt.UTC)


def _check_display_name(statement: Statement, trusted: TrustedKeyring) -> None:
    """The report's display name is its vendor id (what a kit writes) or the name the
    root-signed keyring gives that vendor: never the vendor's own word, which the run's own
    summary.md would show."""
    if _signing_time(statement) < DISPLAY_NAME_IS_ID_SINCE:
        return
    vendor = statement.report.get("vendor")
    shown = vendor.get("display_name") if isinstance(vendor, dict) else None
    identity = trusted.manifest.identity(statement.vendor_id)
    allowed = {statement.vendor_id, *([identity.name] if identity else [])}
    if shown in allowed:
        return
    vouched = f"names it {identity.name!r}" if identity else "names none"
    _fail(6, f"the report's display name {printable(str(shown))!r} for vendor "
             f"{statement.vendor_id} is not the root-signed keyring's (it {vouched}); a report "
             "names its vendor by id or by the keyring's name")


def _read_subject(files_dir: Path, name: str) -> bytes:
    what = "subject file"
    try:
        return read_regular_file(
            path_within(files_dir, name, what), limit=MAX_SUBJECT_BYTES, what=what
        )
    except FileMissing:
        _fail(7, f"subject file {name} is missing from {files_dir}")
    except InputError as exc:
        _fail(7, str(exc))


def step7_read_subject_files(statement: Statement, files_dir: Path) -> dict[str, bytes]:
    """Every subject's bytes, each checked against its signed digest: later steps read these
    very bytes (step 8 report.json, step 13 the files derived from it)."""
    found: dict[str, bytes] = {}
    for subject in statement.subjects:
        data = _read_subject(files_dir, subject.name)
        actual = sha256_bytes(data)
        if actual != subject.sha256:
            _fail(
                7,
                f"{subject.name} was modified after signing (sha256 {actual[:16]}, "
                f"signed {subject.sha256[:16]})",
            )
        found[subject.name] = data
    return found


def step7_check_subject_files(statement: Statement, files_dir: Path) -> bytes:
    """Returns report.json's bytes, so step 8 parses the very bytes step 7 hashed."""
    return step7_read_subject_files(statement, files_dir).get(REPORT_JSON, b"")


def _first_difference(signed: dict[str, Any], on_disk: Any) -> str:
    if not isinstance(on_disk, dict):
        return f"{REPORT_JSON} is not a JSON object"
    for key in sorted(signed.keys() | on_disk.keys()):
        if key not in on_disk:
            return f"key {key!r} is only in the signed report"
        if key not in signed:
            return f"key {key!r} is only in {REPORT_JSON}"
        if canonical_json(signed[key]) != canonical_json(on_disk[key]):
            return f"first difference at key {key!r}"
    return "they differ"


#: Stands for the report in ``_signed_around``'s statement shell (a string no report is).
_REPORT_HOLE = "\x00ckit: the report goes here\x00"
_HOLE_TEXT = canonical_json(_REPORT_HOLE)


def _signed_around(statement: Statement) -> tuple[bytes, bytes] | None:
    """The canonical statement's bytes before and after its report: a payload the kit signed is
    exactly ``before + canonical_json(report) + after``."""
    shell = canonical_json(replace(statement, report=_REPORT_HOLE).to_json())  # type: ignore[arg-type]
    before, hole, after = shell.partition(_HOLE_TEXT)
    return (before, after) if hole and _HOLE_TEXT not in after else None


def _is_signed_with(payload: bytes, statement: Statement, report_text: bytes) -> bool:
    """Whether ``payload`` is the canonical statement ``statement`` (parsed from it) with
    ``report_text`` as its report's bytes. Then report.json says what the signed report says:
    the strict parse of the payload read those very bytes as a complete value (bytes around
    them are the fixed canonical shell), so no second parse is needed."""
    around = _signed_around(statement)
    if around is None:
        return False
    before, after = around
    return (
        len(payload) == len(before) + len(report_text) + len(after)
        and payload.startswith(before)
        and payload.endswith(after)
        and payload[len(before):len(payload) - len(after)] == report_text
    )


def older_kit_layout(report: Mapping[str, Any]) -> bytes:
    """report.json as kits before canonical output (487bd48, 2026-11-27) wrote it: indented,
    sorted keys. Like the canonical form, one byte string per value, so a report of theirs
    still verifies by its bytes."""
    text = json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def _what_differs(report_bytes: bytes, statement: Statement) -> str:
    """Why report.json is not the signed report's bytes: other values, or other text."""
    try:
        on_disk = loads_strict(report_bytes, what=REPORT_JSON)
    except VerificationError as exc:
        return str(exc)
    if canonical_json(on_disk) == canonical_json(statement.report):
        return "the same values in other text"
    return _first_difference(statement.report, on_disk)


def step8_check_report_matches(
    report_bytes: bytes, statement: Statement, payload: bytes = b""
) -> None:
    """report.json is, byte for byte, the report inside the statement (``payload``: the signed
    bytes it was parsed from) as a kit writes it: canonical JSON and a newline, or an older
    kit's indented layout. Never compared by parsed value: a text that parses to the same
    values under this parser may read otherwise under another (numbers, escapes, duplicates)."""
    text = report_bytes.removesuffix(b"\n")
    if text != report_bytes and _is_signed_with(payload, statement, text):
        return  # the common case: no serialisation at all
    signed = statement.report
    if report_bytes in (canonical_json(signed) + b"\n", older_kit_layout(signed)):
        return
    _fail(8, f"{REPORT_JSON} is not the signed report as the kit writes it "
             f"({_what_differs(report_bytes, statement)}); verify the {REPORT_JSON} the kit "
             "wrote")


def step9_read_report(statement: Statement) -> tuple[Report, Standard]:
    try:
        report = Report.from_json(statement.report)
        standard = report_standard(report)
        check_op_names(report)  # attribution is the vendor process's word: no made-up ops
    except VerificationError as exc:
        _fail(9, str(exc))
    if standard.report_format != REPORT_JSON_FORMAT:
        _fail(9, f"standard {standard.version} declares the {standard.report_format} format; "
                 f"its reports are {' and '.join(BODY_FILES)}, not {REPORT_JSON}")
    return report, standard


def step10_check_kit(report: Report, released_kits: Sequence[ReleasedKit]) -> KitStanding:
    try:
        return kit_standing(report, released_kits)
    except VerificationError as exc:
        _fail(10, str(exc))


def step11_check_times(report: Report, now: dt.datetime) -> None:
    try:
        check_run_times(report.run, now)
    except VerificationError as exc:
        _fail(11, str(exc))


def step12_check_grade(report: Report, standard: Standard) -> None:
    try:
        check_grade(report, standard)
    except VerificationError as exc:
        _fail(12, str(exc))


def step13_check_derived_files(subjects: Mapping[str, bytes], report: Mapping[str, Any]) -> None:
    """``report``: report.json's document, as step 8 established it (the signed report)."""
    differences = derived_differences(report, subjects)
    if differences:
        more = f" (and {len(differences) - 1} more)" if len(differences) > 1 else ""
        _fail(13, f"{differences[0]}{more}: a derived file must say what the signed report says")


def _refuse_other_keyring(keyring_dir: Path | None, trusted: TrustedKeyring | None) -> None:
    if trusted is None or keyring_dir is None:
        return
    if keyring_dir.resolve() != trusted.directory.resolve():
        raise InputError(
            f"keyring {keyring_dir} is not the trusted keyring {trusted.directory} passed with it"
        )


@dataclass(frozen=True)
class IntegrityChecked:
    """What steps 1-11 established, before the grade is recomputed (step 12)."""

    verified: VerifiedReport
    standard: Standard
    #: The signed payload's bytes (its sha256 identifies the submission against replays).
    payload: bytes
    #: Each subject file's bytes, as step 7 hashed them (step 13 reads the derived ones).
    subjects: Mapping[str, bytes]


@dataclass(frozen=True)
class _Signed:
    """What steps 1-4 established: an envelope signed by keyring keys of good standing."""

    envelope: Envelope
    signers: tuple[KeyringEntry, ...]
    #: Where the subject files are (the envelope's directory unless given).
    files_dir: Path


def _signed(envelope_path: Path, keyring_dir: Path | None, files_dir: Path | None,
            trusted: TrustedKeyring | None) -> _Signed:
    """Steps 1-4, the same for every report format."""
    _refuse_other_keyring(keyring_dir, trusted)
    if envelope_path.is_dir():
        envelope_path = RunDir(envelope_path).envelope
    envelope = step1_read_envelope(envelope_path)
    step2_check_payload_type(envelope)
    step3_require_signatures(envelope)
    signers = step4_verify_signatures(envelope, keyring_dir, trusted)
    return _Signed(envelope, signers, files_dir or envelope_path.parent)


def _claims_body(payload: bytes) -> bool:
    """Whether the signed payload is a body statement (``kit.signing.body_statement``): a
    verified signature comes first, so only a keyring key's payload is parsed twice."""
    try:
        return is_body_statement(loads_strict(payload, what="payload"))
    except VerificationError:
        return False  # step 5 says what is wrong with it


@dataclass(frozen=True)
class BodyIntegrity:
    """Steps 1-7 of a ``body``-format report (``kit.verification.verify_body``): who signed
    which body. Its content is checked apart, once per signed payload."""

    statement: BodyStatement
    signers: tuple[KeyringEntry, ...]
    #: The signed payload's sha256: the submission's identity and the content verdict's key.
    payload_sha256: str
    #: Each subject file's bytes, as step 7 hashed them.
    files: Mapping[str, bytes]


def step5_parse_body_statement(payload: bytes) -> BodyStatement:
    try:
        return parse_body_statement(loads_strict(payload, what="payload"))
    except VerificationError as exc:
        _fail(5, str(exc))


def _body_integrity(signed: _Signed, trusted: TrustedKeyring | None) -> BodyIntegrity:
    statement = step5_parse_body_statement(signed.envelope.payload)
    step6_check_vendor_binding(statement.as_statement(), signed.signers, trusted)
    files = step7_read_subject_files(statement.as_statement(), signed.files_dir)
    return BodyIntegrity(statement, signed.signers, sha256_bytes(signed.envelope.payload), files)


def verify_body_integrity(
    envelope_path: Path,
    keyring_dir: Path | None = None,
    files_dir: Path | None = None,
    *,
    trusted: TrustedKeyring | None = None,
) -> BodyIntegrity:
    """Steps 1-7 of a body-format report: envelope, signatures, key standing, digests."""
    return _body_integrity(_signed(envelope_path, keyring_dir, files_dir, trusted), trusted)


def _verified_body(checked: BodyIntegrity, now: dt.datetime,
                   released_kits: Sequence[ReleasedKit]) -> VerifiedReport:
    """Steps 8-12 of a body, in full: what ``verify_envelope`` returns for any format."""
    verdict, report = check_body_content(checked.files, checked.statement.claim, now=now,
                                         released_kits=released_kits)
    if not verdict.passed or report is None:
        raise VerificationError(verdict.problem)
    keyids = tuple(signer.keyid for signer in checked.signers)
    return VerifiedReport(
        vendor=checked.statement.claim.vendor_id, keyid=keyids[0], report=dict(report.document),
        subjects=checked.statement.subjects, kit_version=checked.statement.claim.kit_version,
        keyids=keyids, content=report, kit=kit_standing(report, released_kits),
    )


def verify_before_grade(
    envelope_path: Path,
    keyring_dir: Path | None = None,
    files_dir: Path | None = None,
    *,
    now: dt.datetime | None = None,
    released_kits: Sequence[ReleasedKit] | None = None,
    trusted: TrustedKeyring | None = None,
) -> IntegrityChecked:
    """Steps 1-11 of the checklist (``verify_envelope`` without the grade); the audit runs
    step 12 as a check of its own. A report of the ``report-json`` format."""
    signed = _signed(envelope_path, keyring_dir, files_dir, trusted)
    return _before_grade(signed, now=now, released_kits=released_kits, trusted=trusted)


def _before_grade(
    signed: _Signed,
    *,
    now: dt.datetime | None,
    released_kits: Sequence[ReleasedKit] | None,
    trusted: TrustedKeyring | None,
) -> IntegrityChecked:
    envelope, signers = signed.envelope, signed.signers
    statement = step5_parse_statement(envelope.payload)
    step6_check_vendor_binding(statement, signers, trusted)
    subjects = step7_read_subject_files(statement, signed.files_dir)
    step8_check_report_matches(subjects.get(REPORT_JSON, b""), statement, envelope.payload)
    report, standard = step9_read_report(statement)
    released = load_released_kits() if released_kits is None else released_kits
    standing = step10_check_kit(report, released)
    step11_check_times(report, now or dt.datetime.now(dt.UTC))
    verified = VerifiedReport(
        vendor=statement.vendor_id,
        keyid=signers[0].keyid,
        report=statement.report,
        subjects=statement.subjects,
        kit_version=statement.kit_version,
        keyids=tuple(signer.keyid for signer in signers),
        content=report,
        kit=standing,
    )
    return IntegrityChecked(verified, standard, envelope.payload, subjects)


def verify_envelope(
    envelope_path: Path,
    keyring_dir: Path | None = None,
    files_dir: Path | None = None,
    *,
    now: dt.datetime | None = None,
    released_kits: Sequence[ReleasedKit] | None = None,
    trusted: TrustedKeyring | None = None,
) -> VerifiedReport:
    """Run the checklist; ``envelope_path`` may be the run directory holding the envelope.

    ``now`` (default: the clock) and ``released_kits`` (default: the kit's list) are what the
    verifier knows itself; tests pass their own. ``trusted`` (from ``load_trusted_keyring``)
    brings its own keys: ``keyring_dir``, if given too, must be its directory.
    """
    with collector_paused():  # a whole run's report is a million objects, none in a cycle
        signed = _signed(envelope_path, keyring_dir, files_dir, trusted)
        if _claims_body(signed.envelope.payload):
            released = load_released_kits() if released_kits is None else released_kits
            return _verified_body(_body_integrity(signed, trusted),
                                  now or dt.datetime.now(dt.UTC), released)
        checked = _before_grade(signed, now=now, released_kits=released_kits, trusted=trusted)
        step12_check_grade(checked.verified.content, checked.standard)
        step13_check_derived_files(checked.subjects, checked.verified.report)
    return checked.verified
