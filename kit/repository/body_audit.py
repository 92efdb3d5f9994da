"""The audit of one ``body``-format submission: the checklist of ``kit.repository.audit`` with
integrity and content apart.

Check 2 is the body's integrity (``verify_body_integrity``: envelope, signatures, digests) and
its content steps 8-11; checks 4 (required tests), 5 (skip policy) and 6 (grade, step 12) read
the typed report. The content steps and checks 4-6 read the whole body, so they run once per
signed payload: with the auditor's ``ContentCache`` their verdict is recorded when the audit
first takes the submission (or at ``ckit submit``) and read back after, keyed by the payload
whose signature and body digests this very audit checked. Checks 3 (path), 8 (policy) and 9
(key) read the head alone, the few KB the statement's claim is checked against; 11 (derived
files) has nothing to check: a body's derived files are rendered on demand, never signed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kit.errors import VerificationError
from kit.grading.released import ReleasedKit
from kit.printable import printable
from kit.report.body import decode_head
from kit.report.model import Report
from kit.repository.interface import CheckResult
from kit.repository.layout import LayoutError, SubmissionKey, submission_key_of
from kit.repository.submission_checks import (
    DERIVED,
    GRADE,
    INTEGRITY,
    PATH,
    REQUIRED,
    SKIPS,
    TITLES,
    check_required,
    check_skips,
    failed,
    judged,
    not_checked,
    passed,
)
from kit.rundir import REPORT_HEAD, RunDir
from kit.verification.body_content import ContentVerdict
from kit.verification.content import kit_standing, report_standard
from kit.verification.content_cache import ContentCache
from kit.verification.verify import BodyIntegrity, VerifiedReport, verify_body_integrity
from kit.verification.verify_body import body_content


@dataclass(frozen=True)
class BodyAudited:
    """Checks 2-6 and 11 of a body submission, and what the seams (8-10) read."""

    checks: tuple[CheckResult, ...]
    #: The submission as the seams take it (its report typed from the head alone); None when
    #: check 2 failed.
    verified: VerifiedReport | None
    #: The whole report, when this audit decoded the body and keeps no verdicts (the gate's and
    #: the portal's audits); None with a ``ContentCache``.
    report: Report | None


def _lines(report: Report) -> tuple[tuple[int, bool, str], ...]:
    """Checks 4 and 5 of the typed report, to be recorded with the content verdict."""
    standard = report_standard(report)
    return tuple((c.number, c.passed, c.why)
                 for c in (check_required(report, standard), check_skips(report, standard)))


def _recorded(number: int, verdict: ContentVerdict) -> CheckResult:
    found = next((line for line in verdict.checks if line[0] == number), None)
    if found is None:
        return CheckResult(number, TITLES[number], False, "not checked: no verdict recorded",
                           skipped=True)
    return CheckResult(number, TITLES[number], found[1], found[2])


def _head_verified(checked: BodyIntegrity, released_kits: Sequence[ReleasedKit]
                   ) -> VerifiedReport:
    """What the seams read, from the head alone: its bytes are a checked subject and, the
    content verdict having passed steps 8-11, a head that validates and makes the claim."""
    head = decode_head(checked.files[REPORT_HEAD])
    report = Report.from_checked_head(head)
    keyids = tuple(signer.keyid for signer in checked.signers)
    return VerifiedReport(
        vendor=checked.statement.claim.vendor_id, keyid=keyids[0], report=head,
        subjects=checked.statement.subjects, kit_version=checked.statement.claim.kit_version,
        keyids=keyids, content=report, kit=kit_standing(report, released_kits),
    )


def claimed_key(checked: BodyIntegrity) -> SubmissionKey:
    """Where the body is filed, from its signed statement's claim (no body read): check 3's
    expectation and ``ckit submit``'s path. ``LayoutError`` or ``ValueError`` if it names none."""
    claim = checked.statement.claim
    return submission_key_of(claim.torch_release, claim.vendor_id, claim.kit_version,
                             dt.datetime.fromisoformat(claim.finished_at), checked.payload_sha256)


def _check_path(key: SubmissionKey, checked: BodyIntegrity) -> CheckResult:
    try:
        expected = claimed_key(checked)
    except (LayoutError, ValueError) as exc:
        return failed(PATH, [printable(str(exc))])
    named = [(segment, getattr(key, segment), getattr(expected, segment))
             for segment in ("torch_release", "vendor", "kit_version", "run_id")]
    return judged(PATH, [printable(f"{segment} segment {found}, but the signed report gives "
                                   f"{wanted}") for segment, found, wanted in named
                         if found != wanted])


def audit_body_submission(
    key: SubmissionKey,
    directory: Path,
    keyring_dir: Path,
    *,
    now: dt.datetime,
    released_kits: Sequence[ReleasedKit],
    cache: ContentCache | None,
) -> BodyAudited:
    """Checks 2-6 and 11 of the body submission in ``directory``."""
    try:
        checked = verify_body_integrity(RunDir(directory).envelope, keyring_dir, directory)
    except VerificationError as exc:
        return _integrity_failed(str(exc))
    verdict, report = body_content(checked, now=now, released_kits=released_kits, cache=cache,
                                   also=_lines)
    if not verdict.typed:  # steps 8-11: the body does not hold up as the claimed report
        return _integrity_failed(verdict.problem)
    grade = (passed(GRADE) if verdict.passed
             else failed(GRADE, [printable(verdict.problem)]))
    checks = (
        passed(INTEGRITY, printable("; ".join(verdict.notes))),
        _check_path(key, checked),
        _recorded(REQUIRED, verdict),
        _recorded(SKIPS, verdict),
        grade,
        passed(DERIVED, "none signed: a body's derived files are rendered on demand"),
    )
    # With a cache (``ckit audit``, ``ckit submit``: no reader of typed reports after) the
    # decoded report is dropped at once: a thousand whole runs held would be tens of GB.
    kept = report if cache is None else None
    return BodyAudited(checks, _head_verified(checked, released_kits), kept)


def _integrity_failed(problem: str) -> BodyAudited:
    checks = (failed(INTEGRITY, [printable(problem)]),
              *(not_checked(number) for number in (PATH, REQUIRED, SKIPS, GRADE, DERIVED)))
    return BodyAudited(checks, None, None)
