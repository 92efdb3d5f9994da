"""``ckit verify`` of a ``body``-format report (a standard's ``report_format: body``).

Integrity: who signed what, a few hundred bytes parsed and the body hashed.

1-4. as for any report (``kit.verification.verify``): the envelope read within its limits,
     the in-toto payload type, signatures, each by a keyring key of good standing
5. the payload parses strictly as a body statement (``kit.signing.body_statement``): every body
   file (``kit.rundir.BODY_FILES``) a subject, the predicate's exact claim
6. the claimed vendor is the keyring vendor of every signing key, valid at the claimed finish
7. every subject file is a regular file within ``MAX_SUBJECT_BYTES`` and has its signed sha256

Content, steps 8-12 (``kit.verification.body_content``): once per signed payload; with a
``ContentCache`` the verdict is recorded, and read back on the next verification of the same
payload. Derived files are not checked: they are not signed, but rendered from the body.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kit.errors import VerificationError
from kit.grading.released import ReleasedKit, load_released_kits
from kit.report.model import Report
from kit.rundir import RunDir
from kit.signing.body_statement import BodyClaim, is_body_statement
from kit.signing.statement import Subject
from kit.signing.trust import TrustedKeyring
from kit.strict_json import collector_paused, loads_strict
from kit.verification.body_content import ContentVerdict, check_body_content
from kit.verification.content_cache import ContentCache, verdict_context
from kit.verification.verify import BodyIntegrity, step1_read_envelope, verify_body_integrity

#: A reader's checks of a typed report, as (number, passed, why) each.
ReportChecks = Callable[[Report], tuple[tuple[int, bool, str], ...]]


@dataclass(frozen=True)
class VerifiedBody:
    vendor: str
    keyids: tuple[str, ...]
    subjects: tuple[Subject, ...]
    claim: BodyClaim
    payload_sha256: str
    content: ContentVerdict
    #: The typed report when this verification ran the content checks; None when it read a
    #: recorded verdict (the body was not decoded).
    report: Report | None

    @property
    def keyid(self) -> str:
        return self.keyids[0]

    @property
    def grade_name(self) -> str:
        return self.content.grade

    @property
    def notes(self) -> tuple[str, ...]:
        return self.content.notes


def body_content(
    checked: BodyIntegrity,
    *,
    now: dt.datetime,
    released_kits: Sequence[ReleasedKit],
    cache: ContentCache | None = None,
    also: ReportChecks | None = None,
) -> tuple[ContentVerdict, Report | None]:
    """Steps 8-12, or their recorded verdict for this payload (steps 1-7 passed first).
    ``also``: the reader's own checks of the typed report, recorded with the verdict."""
    context = verdict_context(released_kits) if cache is not None else ""
    recorded = cache.get(checked.payload_sha256, context) if cache is not None else None
    # A verdict recorded without the reader's own checks (by ``ckit verify``) is taken again.
    if recorded is not None and (also is None or recorded.checks or not recorded.typed):
        return recorded, None
    with collector_paused():  # a whole run's records are a million objects, none in a cycle
        verdict, report = check_body_content(checked.files, checked.statement.claim, now=now,
                                             released_kits=released_kits)
        if report is not None and also is not None:
            verdict = replace(verdict, checks=also(report))
    if cache is not None:
        cache.put(checked.payload_sha256, context, verdict)
    return verdict, report


def verify_body_envelope(
    envelope_path: Path,
    keyring_dir: Path | None = None,
    files_dir: Path | None = None,
    *,
    now: dt.datetime | None = None,
    released_kits: Sequence[ReleasedKit] | None = None,
    trusted: TrustedKeyring | None = None,
    cache: ContentCache | None = None,
) -> VerifiedBody:
    """The whole checklist; the first failed step raises ``VerificationError("step N: ...")``."""
    checked = verify_body_integrity(envelope_path, keyring_dir, files_dir, trusted=trusted)
    released = load_released_kits() if released_kits is None else released_kits
    verdict, report = body_content(checked, now=now or dt.datetime.now(dt.UTC),
                                   released_kits=released, cache=cache)
    if not verdict.passed:
        raise VerificationError(verdict.problem)
    return VerifiedBody(
        vendor=checked.statement.claim.vendor_id,
        keyids=tuple(signer.keyid for signer in checked.signers),
        subjects=checked.statement.subjects,
        claim=checked.statement.claim,
        payload_sha256=checked.payload_sha256,
        content=verdict,
        report=report,
    )


def envelope_is_body(envelope_path: Path) -> bool:
    """Whether the envelope's payload claims a body statement (read within step 1's limits;
    an unreadable envelope is not, and fails the report checklist's step 1 itself)."""
    if envelope_path.is_dir():
        envelope_path = RunDir(envelope_path).envelope
    try:
        payload: Any = loads_strict(step1_read_envelope(envelope_path).payload, what="payload")
    except VerificationError:
        return False
    return is_body_statement(payload)
