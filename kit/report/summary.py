"""A run's summary: counts per tier and overall, per flow, and where the device calls ran their
ops, as one typed value (``Summary``).

Built once from the records (``summarize``); report.json's ``summary`` is its ``to_json``, and
every reader takes it back typed (``Summary.from_json``, through ``kit.report.model.Report`` or
``summary_of``), so a new summary field is a change here plus the renderers that show it.
"""

from __future__ import annotations

import collections
import operator
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict, TypeVar

from kit.report.attribution_summary import (
    AttributionJson,
    AttributionTotals,
    GatheredDispatches,
    attribution_summary,
)
from kit.report.core_aten import CoreAtenCoverage, core_aten_coverage
from kit.report.flow_summary import FlowTotals, FlowTotalsJson, flow_summary
from kit.report.tier_runs import tier_runs
from kit.results import NOT_RUN_STATUSES, RecordFields, Status, tier_of
from kit.tiers.registry import tier_order

_T = TypeVar("_T")
_ID = operator.attrgetter("id")
_STATUS = operator.attrgetter("status")


class CountsJson(TypedDict):
    statuses: dict[str, int]
    total: int
    ran: int
    passed: int
    missing: int
    pass_rate: float | None


class SummaryJson(TypedDict):
    overall: CountsJson
    tiers: dict[str, CountsJson]
    flows: dict[str, FlowTotalsJson]
    attribution: NotRequired[AttributionJson]


@dataclass(frozen=True)
class Counts:
    """One tier's counts, or the run's (``summary.overall``)."""

    #: Status value -> records, one key per status the report's standard declares.
    statuses: Mapping[str, int]
    total: int
    ran: int
    passed: int
    #: Locked tests without a record.
    missing: int
    #: passed / ran; None when nothing ran.
    pass_rate: float | None

    def rate_counting_missing(self) -> float | None:
        """passed / (ran + missing): a missing test counts as failed, as the grade counts it."""
        denominator = self.ran + self.missing
        return self.passed / denominator if denominator else None

    def to_json(self) -> CountsJson:
        return {
            "statuses": dict(self.statuses),
            "total": self.total,
            "ran": self.ran,
            "passed": self.passed,
            "missing": self.missing,
            "pass_rate": self.pass_rate,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Counts:
        rate = data["pass_rate"]
        return cls(
            statuses={str(status): int(n) for status, n in data["statuses"].items()},
            total=int(data["total"]),
            ran=int(data["ran"]),
            passed=int(data["passed"]),
            missing=int(data["missing"]),
            pass_rate=None if rate is None else float(rate),
        )


@dataclass(frozen=True)
class Summary:
    """report.json's ``summary``, typed."""

    overall: Counts
    #: Per tier the run asked for or produced a record in.
    tiers: Mapping[str, Counts]
    #: Per flow (the flows tier and models through flows).
    flows: Mapping[str, FlowTotals]
    #: Where the device calls ran their ops; None: no record says (a v1 standard).
    attribution: AttributionTotals | None = None

    def core_aten(self, release: str) -> CoreAtenCoverage | None:
        """The core ATen ops of torch ``release`` the device calls reached, and how: derived from
        ``attribution`` when read (``kit.report.core_aten``), never a key of report.json."""
        return core_aten_coverage(self.attribution, release)

    def tiers_in_order(self) -> list[tuple[str, Counts]]:
        """The per-tier counts in the kit's tier order: report.json stores them with sorted
        keys, so a view of it must not follow the mapping's own order."""
        return in_tier_order(self.tiers)

    def to_json(self) -> SummaryJson:
        data: SummaryJson = {
            "overall": self.overall.to_json(),
            "tiers": {tier: counts.to_json() for tier, counts in self.tiers.items()},
            "flows": {flow: totals.to_json() for flow, totals in self.flows.items()},
        }
        if self.attribution is not None:  # only a standard asking where ops ran has the key
            data["attribution"] = self.attribution.to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Summary:
        found = data.get("attribution")
        return cls(
            overall=Counts.from_json(data["overall"]),
            tiers={str(tier): Counts.from_json(c) for tier, c in data["tiers"].items()},
            flows={str(flow): FlowTotals.from_json(flow, totals)
                   for flow, totals in data["flows"].items()},
            attribution=None if found is None else AttributionTotals.from_json(found),
        )


def summary_of(document: Mapping[str, Any]) -> Summary:
    """The typed summary of a report document (the renderers of report.json's own bytes)."""
    return Summary.from_json(document["summary"])


def counts(
    records: Sequence[RecordFields], missing: int = 0, declared: Collection[Status] = tuple(Status)
) -> Counts:
    """``declared``: the statuses the report's standard declares (``Standard.statuses``), one
    key each, whether or not a record holds it."""
    return _counts(collections.Counter(map(_STATUS, records)), missing, declared)


def _counts(found: Mapping[Status, int], missing: int, declared: Collection[Status]) -> Counts:
    """The counts of records counted per status (``found``)."""
    statuses = {status.value: 0 for status in Status if status in declared}
    for status, number in found.items():
        statuses[status.value] += number  # a status the standard does not declare: KeyError
    ran = sum(n for value, n in statuses.items() if Status(value) not in NOT_RUN_STATUSES)
    passed = statuses[Status.PASS.value]
    return Counts(statuses=statuses, total=sum(found.values()), ran=ran, passed=passed,
                  missing=missing, pass_rate=passed / ran if ran else None)


def in_tier_order(tiers: Mapping[str, _T]) -> list[tuple[str, _T]]:
    """A mapping's per-tier entries in the kit's tier order, whatever order it keeps."""
    return sorted(tiers.items(), key=lambda item: (tier_order(item[0]), item[0]))


def summarize(
    records: Sequence[RecordFields],
    missing: Sequence[str],
    run_tiers: Iterable[str],
    declared: Collection[Status],
    counted: Mapping[tuple[str, Status], int] | None = None,
    dispatches: GatheredDispatches | None = None,
) -> Summary:
    """Counts overall and for each tier the run asked for or produced a record in, one key per
    status the report's standard declares; per flow; where the device calls ran their ops,
    when the records say. ``counted``: ``tier_status_counts(records)``, ``dispatches``:
    ``gather_dispatches(records)``, where the caller has them already
    (``kit.report.model.Report``'s)."""
    by_tier = tier_status_counts(records) if counted is None else counted
    missing_by_tier = collections.Counter(map(tier_of, missing))
    present = set(run_tiers) | {tier for tier, _ in by_tier} | set(missing_by_tier)
    ordered = sorted(present, key=lambda t: (tier_order(t), t))
    of_tier: dict[str, collections.Counter[Status]] = {tier: collections.Counter()
                                                        for tier in ordered}
    overall: collections.Counter[Status] = collections.Counter()
    for (tier, status), number in by_tier.items():
        of_tier[tier][status] += number
        overall[status] += number
    tiers = {tier: _counts(of_tier[tier], missing_by_tier[tier], declared) for tier in ordered}
    return Summary(
        overall=_counts(overall, len(missing), declared),
        tiers=tiers,
        flows=flow_summary(records),
        attribution=attribution_summary(records, dispatches),
    )


def tier_status_counts(records: Sequence[RecordFields]
                       ) -> collections.Counter[tuple[str, Status]]:
    """The records counted per (tier, status).

    Verify counts every record of a report again: a tier's run of them at a time
    (``kit.report.tier_runs``), its statuses counted in C; records in another order are
    counted one by one."""
    ids = list(map(_ID, records))
    runs = tier_runs(ids)
    if runs is None:
        return collections.Counter(zip(map(tier_of, ids), map(_STATUS, records), strict=True))
    counted: collections.Counter[tuple[str, Status]] = collections.Counter()
    for run in runs:
        for status, number in collections.Counter(map(_STATUS, records[run.start:run.stop])
                                                  ).items():
            counted[run.tier, status] += number
    return counted
