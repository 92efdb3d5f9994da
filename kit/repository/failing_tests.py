"""The 72-hour rule per test: since when each failing test of a vendor's latest result fails.

History is the vendor's audited results of the release (``gate.accepted_results``), oldest run
finish first; a canary run is never one, so it neither starts nor ends a streak. A test's streak is
walked back from the latest result: a result that records the test failing extends it, a result
that records it passing ends it, and a result without a failing or passing record of it
(narrowed, skipped, not applicable) neither extends nor ends it. Only a pass ends the clock, so
skipping a failing test for one run never restarts it. The time of a result is the gate's clock
for the vendor's window: the signed run finish.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from kit.repository.interface import SubmissionAudit
from kit.repository.layout import SubmissionKey
from kit.results import Status

#: How many of a vendor's oldest failing tests a compact listing names.
OLDEST_SHOWN = 3


class FailingTestJson(TypedDict):
    test_id: str
    status: str
    first_failed: str
    first_submission: str
    hours: int
    breach: bool


@dataclass(frozen=True)
class FailingTest:
    test_id: str
    #: Its status in the latest result.
    status: Status
    #: The run finish of the first result of its unbroken streak of failures.
    first_failed: dt.datetime
    #: The submission that first recorded it failing in this streak.
    first_submission: SubmissionKey
    #: Whole hours from ``first_failed`` to the gate's now.
    hours: int
    #: Failing for longer than the window.
    breach: bool

    def to_json(self) -> FailingTestJson:
        return {
            "test_id": self.test_id,
            "status": self.status.value,
            "first_failed": self.first_failed.isoformat(),
            "first_submission": str(self.first_submission),
            "hours": self.hours,
            "breach": self.breach,
        }


def _statuses(submission: SubmissionAudit) -> dict[str, Status]:
    assert submission.report is not None  # only passed audits with a report are history
    return {record.id: record.status for record in submission.report.records}


def _first_failure(test_id: str, history: Sequence[tuple[SubmissionAudit, dict[str, Status]]]
                   ) -> SubmissionAudit:
    first = history[-1][0]
    for submission, statuses in reversed(history):
        status = statuses.get(test_id)
        if status is Status.PASS:
            break
        if status is not None and status.is_failure:
            first = submission
    return first


def failing_tests(history: Sequence[SubmissionAudit], now: dt.datetime,
                  window_hours: float) -> tuple[FailingTest, ...]:
    """Each failing test of ``history``'s latest result with the first failure of its streak,
    oldest first (then by id); empty without history."""
    if not history:
        return ()
    statuses = [(submission, _statuses(submission)) for submission in history]
    failing = sorted(t for t, status in statuses[-1][1].items() if status.is_failure)
    found = []
    for test_id in failing:
        first = _first_failure(test_id, statuses)
        assert first.report is not None
        since = first.report.run.finished_at
        age = (now - since).total_seconds() / 3600
        found.append(FailingTest(test_id, statuses[-1][1][test_id], since, first.key,
                                 int(age), age > window_hours))
    return tuple(sorted(found, key=lambda t: (t.first_failed, t.test_id)))


def breaches(tests: Sequence[FailingTest]) -> tuple[FailingTest, ...]:
    return tuple(test for test in tests if test.breach)
