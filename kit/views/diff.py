"""``ckit diff A B``: what changed between two runs' reports, test by test.

A test regressed when it passed in A and did not in B; improved the other way round; changed
when it failed in both but differently; appeared or vanished when only one report holds it.
A test outside the other run's scope (its tiers, ``--select`` and shard: a ``--rerun-failed``
run selects only the failures) is not compared at all, only counted: the run never meant to
run it, so its absence there is no vanishing.
Reports judged by different standards have different tests and bounds, so comparing them is
refused unless asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from kit.errors import InputError
from kit.grading.wording import run_wording
from kit.patterns import select_ids
from kit.printable import printable
from kit.report.figures import Figures, figures_of
from kit.report.id_order import in_natural_order
from kit.report.model import Report
from kit.report.read import LoadedReport
from kit.results import Status, TestRecord, tier_of
from kit.views.performance import (
    PerformanceChange,
    performance_changes,
    performance_diff_lines,
)

#: The categories, in the order shown.
CATEGORIES = ("regressed", "improved", "changed", "appeared", "vanished")


class SideJson(TypedDict):
    status: str
    figures: dict[str, float | int | str] | None


class ChangeJson(TypedDict):
    id: str
    a: SideJson | None
    b: SideJson | None


class DescribedReportJson(TypedDict):
    report: str
    report_sha256: str
    vendor: str
    kit_version: str
    kit_digest: str
    standard: str
    grade: str


@dataclass(frozen=True)
class Side:
    """One test as one report has it (absent: the report holds no record of it)."""

    status: str | None
    figures: Figures | None

    def to_json(self) -> SideJson | None:
        if self.status is None:
            return None
        return {"status": self.status,
                "figures": self.figures.to_json() if self.figures else None}

    def text(self) -> str:
        if self.status is None:
            return "absent"
        return self.status + (f" ({self.figures.text()})" if self.figures else "")


ABSENT = Side(None, None)


@dataclass(frozen=True)
class Change:
    test_id: str
    before: Side
    after: Side

    def to_json(self) -> ChangeJson:
        return {"id": self.test_id, "a": self.before.to_json(), "b": self.after.to_json()}


@dataclass(frozen=True)
class ReportDiff:
    a: LoadedReport
    b: LoadedReport
    changes: Mapping[str, tuple[Change, ...]]
    unchanged: int
    #: Tests one report holds that the other run did not select (not compared).
    outside_scope: int = 0
    #: The model tier's figures of the compared tests both runs measured (recorded, not
    #: graded: they change no category and no exit code).
    performance: tuple[PerformanceChange, ...] = ()

    @property
    def regressed(self) -> bool:
        return bool(self.changes["regressed"])

    def to_json(self) -> dict[str, object]:
        # The categories' lists under their own names (``CATEGORIES``), after the counts.
        return {
            "a": _describe(self.a),
            "b": _describe(self.b),
            "counts": {name: len(self.changes[name]) for name in CATEGORIES},
            "unchanged": self.unchanged,
            "outside_scope": self.outside_scope,
            **{name: [c.to_json() for c in self.changes[name]] for name in CATEGORIES},
            "performance": [change.to_json() for change in self.performance],
        }


def _describe(source: LoadedReport) -> DescribedReportJson:
    report = source.report
    return {"report": str(source.path), "report_sha256": source.sha256,
            "vendor": report.vendor_id, "kit_version": report.kit.version,
            "kit_digest": report.kit.digest, "standard": report.standard.version,
            "grade": report.grade.name}


def _side(record: TestRecord | None) -> Side:
    if record is None:
        return ABSENT
    return Side(record.status.value, figures_of(record))


def category_of(before: Side, after: Side) -> str | None:
    """Which category a test's change falls in; None when its status did not change."""
    if before.status is None:
        return "appeared"
    if after.status is None:
        return "vanished"
    passed = Status.PASS.value
    if before.status == passed and after.status != passed:
        return "regressed"
    if before.status != passed and after.status == passed:
        return "improved"
    return "changed" if before.status != after.status else None


def refuse_other_standard(a: LoadedReport, b: LoadedReport) -> None:
    ours, theirs = a.report.standard.version, b.report.standard.version
    if ours != theirs:
        raise InputError(
            f"{a.path} was judged by standard {ours} and {b.path} by standard {theirs}: "
            "their tests and bounds differ; pass --allow-other-standard to compare anyway"
        )


def in_scope(report: Report, test_ids: set[str]) -> set[str]:
    """Which of ``test_ids`` the run of ``report`` set out to run: its tiers, its ``--select``
    patterns and, on a shard, the shard's tests."""
    run = report.run
    ids = [t for t in sorted(test_ids) if tier_of(t) in run.tiers]
    scoped = set(select_ids(ids, run.select))
    if run.shard is not None:
        scoped &= set(run.shard.tests)
    return scoped


def diff_reports(a: LoadedReport, b: LoadedReport, *, allow_other_standard: bool) -> ReportDiff:
    if not allow_other_standard:
        refuse_other_standard(a, b)
    before = {r.id: r for r in a.report.records}
    after = {r.id: r for r in b.report.records}
    every = before.keys() | after.keys()
    compared = in_scope(a.report, set(every)) & in_scope(b.report, set(every))
    found: dict[str, list[Change]] = {name: [] for name in CATEGORIES}
    unchanged = 0
    for test_id in in_natural_order(compared):
        change = Change(test_id, _side(before.get(test_id)), _side(after.get(test_id)))
        category = category_of(change.before, change.after)
        if category is None:
            unchanged += 1
        else:
            found[category].append(change)
    return ReportDiff(a, b, {name: tuple(found[name]) for name in CATEGORIES}, unchanged,
                      len(every - compared), performance_changes(a.report, b.report, compared))


# -- text ------------------------------------------------------------------------------------

def _source_line(label: str, source: LoadedReport) -> str:
    report = source.report
    return (f"{label}: {source.path}: vendor {report.vendor_id}, kit {report.kit.version} "
            f"({report.kit.digest[:12]}), standard {report.standard.version}, "
            f"grade {run_wording(report).short()}")


def _change_line(name: str, change: Change) -> str:
    if name == "appeared":
        return f"  {change.test_id}: {change.after.text()}"
    if name == "vanished":
        return f"  {change.test_id}: was {change.before.text()}"
    return f"  {change.test_id}: {change.before.text()} -> {change.after.text()}"


def diff_lines(diff: ReportDiff, limit: int) -> list[str]:
    """The diff as terminal lines, every one printable; at most ``limit`` tests a category."""
    counts = ", ".join(f"{len(diff.changes[name])} {name}" for name in CATEGORIES)
    outside = (f", {diff.outside_scope} outside the other run's selection (not compared)"
               if diff.outside_scope else "")
    lines = [_source_line("A", diff.a), _source_line("B", diff.b),
             f"{counts}, {diff.unchanged} unchanged{outside}"]
    for name in CATEGORIES:
        changes = diff.changes[name]
        if not changes:
            continue
        lines += ["", f"{name} ({len(changes)}):"]
        lines += [_change_line(name, change) for change in changes[:limit]]
        if len(changes) > limit:
            lines.append(f"  ... and {len(changes) - limit} more (--limit, or --json)")
    performance = performance_diff_lines(diff.performance, limit)
    lines += [""] + performance if performance else []
    return [printable(line) for line in lines]
