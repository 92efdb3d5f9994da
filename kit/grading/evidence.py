"""The facts a grade is judged on, read from the report itself.

Only what report.json records is used (records, missing ids, skip-manifest entries, the run's
dates, policy violations, the environment's torch version), so a report read from disk is graded
again the same way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kit.clock import RunDate
from kit.errors import InputError
from kit.grading.accounting import MISSING, TierSkips, Unaccounted, tier_skips, unaccounted_tests
from kit.report.model import Report
from kit.report.summary import tier_status_counts
from kit.results import (
    NA_REASON_KEY,
    NOT_RUN_STATUSES,
    OPTIONAL_CAPABILITY_REASONS,
    UNJUDGEABLE_REASONS,
    RecordFields,
    Status,
    TestRecord,
)
from kit.standard import Standard
from kit.vendors import SkipEntry, SkipManifest


@dataclass(frozen=True)
class Evidence:
    passed: int
    #: Records that ran (neither SKIPPED nor NOT_APPLICABLE).
    ran: int
    #: Tests of the standard the grade does not accept as run, skipped or not applicable.
    unaccounted: tuple[Unaccounted, ...]
    #: Required test ids that did not pass, with their status (or ``MISSING``), sorted by id.
    required_not_passed: tuple[tuple[str, str], ...]
    violations: tuple[Mapping[str, str], ...]
    tier_skips: tuple[TierSkips, ...]
    #: ``torch.__version__`` as the report's environment recorded it, e.g. ``2.13.0+cpu``.
    torch_version: str
    clock: RunDate
    #: A canary run (``ckit run --canary``): a torch the standard may not certify, on purpose.
    canary: bool = False

    @property
    def counted(self) -> int:
        """The pass rate's denominator: tests that ran, and those not accounted for."""
        return self.ran + len(self.unaccounted)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.counted if self.counted else 0.0

    def tiers_skipping_over(self, share: float) -> list[TierSkips]:
        return [t for t in self.tier_skips if t.share > share]


def collect_evidence(standard: Standard, report: Mapping[str, Any],
                     records: Sequence[TestRecord] | None = None) -> Evidence:
    """The facts to grade ``report`` (a built report, or report.json read back) on; ``records``:
    its records already typed (a verifier's ``Report.records``), else typed here."""
    records = (list(records) if records is not None
               else [TestRecord.from_json(r) for r in report["records"]])
    return _evidence(
        standard, records,
        missing=[str(test_id) for test_id in report["missing"]],
        clock=recorded_clock(report["run"]),
        entries=tuple(SkipEntry.from_json(e) for e in report["skip_manifest"]["entries"]),
        violations=tuple(report["policy"]["violations"]),
        environment=report["environment"],
        canary=report["run"].get("canary") is True,
    )


def report_evidence(standard: Standard, report: Report) -> Evidence:
    """The facts to grade a typed report on: the same as ``collect_evidence`` of its document."""
    try:
        clock = report.run.run_date()
    except ValueError:
        raise _no_clock() from None
    return _evidence(standard, list(report.read_records), missing=list(report.missing), clock=clock,
                     entries=report.skips.entries, violations=report.violations,
                     environment=report.environment, counted=report.tier_status_counts,
                     canary=report.run.canary is True)


def _evidence(standard: Standard, records: Sequence[RecordFields], *, missing: list[str],
              clock: RunDate, entries: tuple[SkipEntry, ...],
              violations: tuple[Mapping[str, str], ...],
              environment: Mapping[str, Any],
              counted: Mapping[tuple[str, Status], int] | None = None,
              canary: bool = False) -> Evidence:
    """``counted``: the records counted per (tier, status), where the caller has them."""
    counted = tier_status_counts(records) if counted is None else counted
    by_status: Counter[Status] = Counter()
    for (_, status), number in counted.items():
        by_status[status] += number
    return Evidence(
        passed=by_status[Status.PASS],
        ran=sum(n for status, n in by_status.items() if status not in NOT_RUN_STATUSES),
        unaccounted=unaccounted_tests(records, missing, SkipManifest(entries), clock.today),
        required_not_passed=_required_not_passed(standard, records, missing),
        violations=violations,
        tier_skips=tier_skips(records, missing, counted),
        torch_version=recorded_torch_version(environment),
        clock=clock,
        canary=canary,
    )


def _required_not_passed(
    standard: Standard, records: Sequence[RecordFields], missing: list[str]
) -> tuple[tuple[str, str], ...]:
    passed = Status.PASS
    found = [(r.id, r.status.value) for r in records
             if r.status is not passed and standard.is_required(r.id)
             and not _exempt_from_required(r)]
    found += [(test_id, MISSING) for test_id in missing if standard.is_required(test_id)]
    return tuple(sorted(found))


def _exempt_from_required(record: RecordFields) -> bool:
    """NOT_APPLICABLE for a reason that holds on every device (``UNJUDGEABLE_REASONS``), or for
    an optional capability the vendor does not claim (``OPTIONAL_CAPABILITY_REASONS``)."""
    return (record.status is Status.NOT_APPLICABLE
            and record.details.get(NA_REASON_KEY) in _EXEMPT_REASONS)


_EXEMPT_REASONS = UNJUDGEABLE_REASONS | OPTIONAL_CAPABILITY_REASONS


def recorded_torch_version(environment: Mapping[str, Any]) -> str:
    torch = environment.get("torch")
    version = torch.get("version") if isinstance(torch, Mapping) else None
    if not isinstance(version, str) or not version:
        raise InputError("the report's environment records no torch version to grade it on")
    return version


def recorded_clock(run: Mapping[str, Any]) -> RunDate:
    try:
        return RunDate.from_json(dict(run))
    except (KeyError, TypeError, ValueError):
        raise _no_clock() from None


def _no_clock() -> InputError:
    return InputError(
        "the report's run records no valid today, clock_today and clock_override to grade it on"
    )
