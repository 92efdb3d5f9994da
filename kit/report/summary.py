"""Counting records per tier and overall."""

from __future__ import annotations

import collections
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from kit.report.attribution_summary import attribution_summary
from kit.report.flow_summary import flow_summary
from kit.results import Status, TestRecord, tier_of
from kit.tiers.registry import tier_order

#: Statuses that mean the test did not run, so they do not count towards the pass rate.
NOT_RUN = frozenset({Status.SKIPPED, Status.NOT_APPLICABLE})


def counts(
    records: Sequence[TestRecord], missing: int = 0, declared: Collection[Status] = tuple(Status)
) -> dict[str, Any]:
    """``declared``: the statuses the report's standard declares (``Standard.statuses``), one
    key each, whether or not a record holds it."""
    statuses = {status.value: 0 for status in Status if status in declared}
    # Counted per status first: verify counts every record of a report again, per tier too.
    for status, number in collections.Counter(record.status for record in records).items():
        statuses[status.value] += number  # a status the standard does not declare: KeyError
    ran = sum(n for value, n in statuses.items() if Status(value) not in NOT_RUN)
    passed = statuses[Status.PASS.value]
    return {
        "statuses": statuses,
        "total": len(records),
        "ran": ran,
        "passed": passed,
        "missing": missing,
        "pass_rate": passed / ran if ran else None,
    }


def in_tier_order(tiers: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A summary's per-tier entries in the kit's tier order: report.json stores them with sorted
    keys, so a file rendered from it must not follow the mapping's own order."""
    return sorted(tiers.items(), key=lambda item: (tier_order(item[0]), item[0]))


def summarize(
    records: Sequence[TestRecord],
    missing: Sequence[str],
    run_tiers: Iterable[str],
    declared: Collection[Status],
) -> dict[str, Any]:
    """Counts overall and for each tier the run asked for or produced a record in, one key per
    status the report's standard declares; per flow; where the device calls ran their ops,
    when the records say."""
    present = set(run_tiers) | {r.tier for r in records} | {tier_of(m) for m in missing}
    ordered = sorted(present, key=lambda t: (tier_order(t), t))
    of_tier: dict[str, list[TestRecord]] = {tier: [] for tier in ordered}
    for record in records:  # one pass, not one per tier
        of_tier[record.tier].append(record)
    tiers = {
        tier: counts(of_tier[tier], sum(1 for m in missing if tier_of(m) == tier), declared)
        for tier in ordered
    }
    summary: dict[str, Any] = {
        "overall": counts(records, len(missing), declared),
        "tiers": tiers,
        "flows": flow_summary(records),
    }
    attribution = attribution_summary(records)
    if attribution is not None:  # only under a standard asking where ops ran (its schema has it)
        summary["attribution"] = attribution
    return summary
