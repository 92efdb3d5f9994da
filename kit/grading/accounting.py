"""Every test of the standard is accounted for, and the manifest skips only a small share.

A test of the run's locked lists is accounted for when it has a record that is not
NOT_APPLICABLE or SKIPPED, is NOT_APPLICABLE for one of the kit's reasons
(``NotApplicableReason``), or is SKIPPED by an unexpired skip-manifest entry. Any other test
(no record at all, a vendor's own ``pytest.skip``, a skip no entry covers) counts as a failure:
hiding a failing test must never grade better than failing it.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kit.report.summary import tier_status_counts
from kit.results import (
    NA_REASON_KEY,
    NOT_RUN_STATUSES,
    NotApplicableReason,
    RecordFields,
    Status,
    tier_of,
)
from kit.tiers.registry import tier_order
from kit.vendors import SkipManifest

#: Status word for a test of the standard that has no record at all.
MISSING = "MISSING"
KIT_NA_REASONS = tuple(reason.value for reason in NotApplicableReason)


@dataclass(frozen=True)
class Unaccounted:
    test_id: str
    #: The record's status, or ``MISSING``.
    status: str
    #: Why the grade does not accept it, in plain words.
    why: str

    def to_json(self) -> dict[str, str]:
        return {"test": self.test_id, "status": self.status, "why": self.why}


@dataclass(frozen=True)
class TierSkips:
    tier: str
    skipped: int
    #: The tier's tests in this run: its records and its missing ids.
    total: int

    @property
    def share(self) -> float:
        return self.skipped / self.total if self.total else 0.0


def unaccounted_tests(
    records: Sequence[RecordFields], missing: Sequence[str], skips: SkipManifest, today: dt.date
) -> tuple[Unaccounted, ...]:
    found = [Unaccounted(test_id, MISSING, "no record at all") for test_id in missing]
    # Only a test that did not run can be unaccounted for: the others are not asked one by one.
    for record in records:
        if record.status not in NOT_RUN_STATUSES:
            continue
        why = _why_unaccounted(record, skips, today)
        if why is not None:
            found.append(Unaccounted(record.id, record.status.value, why))
    return tuple(sorted(found, key=lambda u: u.test_id))


def _why_unaccounted(record: RecordFields, skips: SkipManifest, today: dt.date) -> str | None:
    if record.status is Status.NOT_APPLICABLE:
        return _not_applicable_problem(record.details)
    if record.status is Status.SKIPPED and not skips.decide(record.id, today).skip:
        return "skipped, but no unexpired skip-manifest entry covers it"
    return None


def _not_applicable_problem(details: dict[str, Any]) -> str | None:
    code = details.get(NA_REASON_KEY)
    if code in KIT_NA_REASONS:
        return None
    known = f"the kit's reasons: {', '.join(KIT_NA_REASONS)}"
    if code is None:
        return f"not applicable without a reason code from the kit ({known})"
    return f"not applicable for reason code {code!r}, not one of the kit's ({known})"


def tier_skips(records: Sequence[RecordFields], missing: Sequence[str],
               counted: Mapping[tuple[str, Status], int] | None = None
               ) -> tuple[TierSkips, ...]:
    """Skipped and total tests per tier present, in the kit's tier order; ``counted``:
    ``tier_status_counts(records)``, where the caller has them."""
    # The records counted per tier and status as the summary counts them (a report's records
    # a tier's run at a time), not a call per record.
    totals = Counter(map(tier_of, missing))
    skipped: Counter[str] = Counter()
    for (tier, status), number in (tier_status_counts(records) if counted is None
                                   else counted).items():
        totals[tier] += number
        if status is Status.SKIPPED:
            skipped[tier] += number
    ordered = sorted(totals, key=lambda t: (tier_order(t), t))
    return tuple(TierSkips(tier, skipped[tier], totals[tier]) for tier in ordered)
