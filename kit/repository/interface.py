"""What an audit says: one numbered check per line, per submission and for the repository.

``ckit audit`` produces these; ``ckit gate`` and ``ckit portal`` read them, so a submission that
failed its audit is never counted nor shown as a result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

from kit.report.model import Report
from kit.repository.layout import SubmissionKey
from kit.signing.keyring import VendorIdentity


class CheckResultJson(TypedDict):
    number: int
    title: str
    passed: bool
    why: str
    #: Not run (an earlier check it needs failed): not passed, and no failure of its own.
    skipped: bool


class SubmissionAuditJson(TypedDict):
    submission: str
    passed: bool
    payload_digest: str | None
    checks: list[CheckResultJson]


class RepositoryAuditJson(TypedDict):
    """``ckit audit --json``."""

    passed: bool
    checks: list[CheckResultJson]
    submissions: list[SubmissionAuditJson]


@dataclass(frozen=True)
class CheckResult:
    number: int
    #: What was checked, in a few words ("signature by an active key of the vendor").
    title: str
    passed: bool
    #: One line: why it failed, or a note on a pass ("" when there is nothing to add).
    why: str = ""
    #: Not run, because a check it needs failed first (``why`` says which): it has not passed,
    #: but it is no failure of its own, and says so rather than ✗.
    skipped: bool = False

    def to_json(self) -> CheckResultJson:
        return {"number": self.number, "title": self.title, "passed": self.passed, "why": self.why,
                "skipped": self.skipped}


def first_failure_of(checks: Sequence[CheckResult]) -> CheckResult | None:
    """The first check that failed on its own, else the first one skipped."""
    failures = [check for check in checks if not check.passed]
    return next((check for check in failures if not check.skipped),
                failures[0] if failures else None)


@dataclass(frozen=True)
class SubmissionAudit:
    key: SubmissionKey
    checks: tuple[CheckResult, ...]
    #: The report, when the submission got far enough for it to be read and verified.
    report: Report | None = None
    #: The sha256 of the signed payload, the identity replays are detected by.
    payload_digest: str | None = None

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(check.passed for check in self.checks)

    @property
    def first_failure(self) -> CheckResult | None:
        return first_failure_of(self.checks)

    def to_json(self) -> SubmissionAuditJson:
        return {
            "submission": str(self.key),
            "passed": self.passed,
            "payload_digest": self.payload_digest,
            "checks": [check.to_json() for check in self.checks],
        }


@dataclass(frozen=True)
class RepositoryAudit:
    #: Checks of the repository as a whole (its keyring, unknown top-level files).
    checks: tuple[CheckResult, ...]
    submissions: tuple[SubmissionAudit, ...]
    #: Who each vendor is, from the keyring the roots signed (none when they did not).
    identities: tuple[VendorIdentity, ...] = ()

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks) and all(s.passed for s in self.submissions)

    def by_key(self) -> Mapping[SubmissionKey, SubmissionAudit]:
        return {audit.key: audit for audit in self.submissions}

    def to_json(self) -> RepositoryAuditJson:
        return {
            "passed": self.passed,
            "checks": [check.to_json() for check in self.checks],
            "submissions": [audit.to_json() for audit in self.submissions],
        }
