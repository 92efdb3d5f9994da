"""What the portal's pages show, read from a repository audit.

Only submissions whose audit passed are results; the others appear as failed audits with every
check line. Every string that came from a submission goes through ``printable`` (no control or
bidi characters reach a page), and everything is sorted, so the same audit gives the same site.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kit.errors import InputError
from kit.flows.interface import Stage
from kit.formats import view
from kit.printable import printable
from kit.report.model import Report
from kit.report.training_summary import is_training_step
from kit.repository.gate import percent
from kit.repository.interface import CheckResult, RepositoryAudit, SubmissionAudit
from kit.repository.layout import SubmissionKey
from kit.results import FAILURE_STATUSES, Status, tier_of
from kit.standard import load_standard
from kit.test_ids import TestId
from kit.tiers.models.segments import EAGER, TRAIN
from kit.tiers.models.tier import ModelsTier
from kit.tiers.unit.tier import UnitTier

#: The tier whose tests are the matrix's rows.
MATRIX_TIER = ModelsTier.name


def text(value: Any) -> str:
    return printable(str(value))


def rate_text(rate: float | None) -> str:
    return "–" if rate is None else percent(rate)


def safe_url(url: Any) -> str | None:
    """``url`` when it is a plain web link; a ``javascript:`` or ``data:`` one is never linked."""
    if isinstance(url, str) and url.startswith(("https://", "http://")) and url.isprintable():
        return url
    return None


def status_css(status: str) -> str:
    if status == Status.PASS.value:
        return "pass"
    if status in {s.value for s in FAILURE_STATUSES}:
        return "fail"
    return "skip"


@dataclass(frozen=True)
class TestRow:
    id: str
    status: str
    css: str
    #: ``STATUS: message``, the hover text.
    outcome: str
    message: str
    reason: str
    max_abs_err: str
    max_rel_err: str


@dataclass(frozen=True)
class TestGroup:
    """The tests of one op (unit tier) or source (other tiers), folded on the page."""

    name: str
    rows: tuple[TestRow, ...]
    failed: int
    passed: int
    not_run: int


@dataclass(frozen=True)
class TierRow:
    tier: str
    total: int
    ran: int
    passed: int
    failed: int
    not_run: int
    missing: int
    rate: str


@dataclass(frozen=True)
class FlowRow:
    """One flow's line: how far its subjects got and what its backend took."""

    flow: str
    #: ``(stage, count)`` in the order a subject goes through the stages.
    stages: tuple[tuple[str, int], ...]
    delegated_ops: int
    undelegated_ops: int
    #: The most frequent operators left out of the backend, as text.
    left_out: str


@dataclass(frozen=True)
class ResultDetail:
    """A verified report, as the pages show it."""

    vendor_name: str
    docs_url: str | None
    docs_text: str
    grade: str
    grade_reasons: tuple[str, ...]
    kit_version: str
    kit_released: bool
    standard: str
    started: str
    finished: str
    overall_rate: float | None
    tiers: tuple[TierRow, ...]
    flows: tuple[FlowRow, ...]
    #: Where the device calls ran their ops, as a sentence (None: not recorded).
    attribution: str | None
    failures: tuple[TestRow, ...]
    groups: tuple[TestGroup, ...]
    records: Mapping[str, TestRow]


@dataclass(frozen=True)
class SubmissionView:
    key: SubmissionKey
    #: The page's path from the site root.
    page: str
    passed: bool
    checks: tuple[CheckResult, ...]
    #: Present only when the audit passed: a failed submission is never shown as a result.
    result: ResultDetail | None
    finished_sort: str

    @property
    def first_failure(self) -> CheckResult | None:
        return next((check for check in self.checks if not check.passed), None)


def group_of(test_id: str) -> str:
    """``unit/opinfo/add`` for ``unit/opinfo/add/float32/0``; ``models/hf`` for a model test."""
    try:
        parsed = TestId.split(test_id)
    except InputError:
        return test_id  # not an id's form: a group of its own
    keep = 2 if parsed.tier == UnitTier.name else 1
    return parsed.prefix(min(keep, len(parsed.segments) - 1))


def _detail(details: Mapping[str, Any], name: str) -> str:
    return text(view.detail_text(details.get(name)))


def test_row(document: Mapping[str, Any], record: Mapping[str, Any]) -> TestRow:
    return TestRow(
        id=text(record["id"]),
        status=text(record["status"]),
        css=status_css(record["status"]),
        outcome=text(view.outcome_text(record)),
        message=text(record["message"]),
        reason=text(view.skip_reason(document, record)),
        max_abs_err=_detail(record["details"], "max_abs_err"),
        max_rel_err=_detail(record["details"], "max_rel_err"),
    )


def _groups(rows: Sequence[TestRow]) -> tuple[TestGroup, ...]:
    grouped: dict[str, list[TestRow]] = {}
    for row in rows:
        grouped.setdefault(group_of(row.id), []).append(row)
    return tuple(
        TestGroup(
            name=name,
            rows=tuple(members),
            failed=sum(1 for r in members if r.css == "fail"),
            passed=sum(1 for r in members if r.css == "pass"),
            not_run=sum(1 for r in members if r.css == "skip"),
        )
        for name, members in sorted(grouped.items())
    )


def _tier_rows(summary: Mapping[str, Any]) -> tuple[TierRow, ...]:
    rows = []
    for tier, counts in summary["tiers"].items():
        statuses = counts["statuses"]
        failed = sum(statuses.get(s.value, 0) for s in FAILURE_STATUSES)
        rows.append(
            TierRow(
                tier=text(tier),
                total=counts["total"],
                ran=counts["ran"],
                passed=counts["passed"],
                failed=failed,
                not_run=counts["total"] - counts["ran"],
                missing=counts["missing"],
                rate=rate_text(overall_rate(counts)),
            )
        )
    return tuple(rows)


def _flow_rows(report: Report) -> tuple[FlowRow, ...]:
    order = {stage.value: index for index, stage in enumerate(Stage)}
    return tuple(
        FlowRow(
            flow=text(totals.flow),
            stages=tuple(
                (text(stage), count)
                for stage, count in sorted(totals.stages.items(),
                                           key=lambda item: order.get(item[0], len(order)))
            ),
            delegated_ops=totals.delegated_ops,
            undelegated_ops=totals.undelegated_ops,
            left_out=text(", ".join(f"{op} ({n})" for op, n in totals.top_undelegated[:5])),
        )
        for totals in report.flows.values()
    )


def _attribution_text(report: Report) -> str | None:
    totals = report.attribution
    if totals is None:
        return None
    fallback = totals.fallback_ops()
    through = ", ".join(f"{op} ({n})" for op, n in fallback[:5]) + (" ..." if len(fallback) > 5
                                                                     else "")
    return text(
        f"{rate_text(totals.native_rate)} of the device ops of {totals.tests} test(s) ran "
        f"natively; {totals.tests_with_fallback} test(s) used the backend's fallback"
        + (f": {through}" if fallback else "")
    )


def overall_rate(counts: Mapping[str, Any]) -> float | None:
    """passed / (ran + locked tests without a record): a missing test counts as failed."""
    denominator = counts["ran"] + counts["missing"]
    return counts["passed"] / denominator if denominator else None


def result_detail(report: Report) -> ResultDetail:
    document = report.document
    rows = [test_row(document, record) for record in document["records"]]
    vendor = document["vendor"]
    return ResultDetail(
        vendor_name=text(vendor["display_name"]),
        docs_url=safe_url(vendor["docs_url"]),
        docs_text=text(vendor["docs_url"]),
        grade=text(report.grade.name),
        grade_reasons=tuple(text(reason) for reason in report.grade.reasons),
        kit_version=text(report.kit.version),
        kit_released=report.kit.released,
        standard=text(f"{report.standard.version} (torch {report.standard.torch_release})"),
        started=report.run.started_at.isoformat(),
        finished=report.run.finished_at.isoformat(),
        overall_rate=overall_rate(report.summary["overall"]),
        tiers=_tier_rows(report.summary),
        flows=_flow_rows(report),
        attribution=_attribution_text(report),
        failures=tuple(row for row in rows if row.css == "fail"),
        groups=_groups(rows),
        records={row.id: row for row in rows},
    )


def submission_page(key: SubmissionKey) -> str:
    return f"submissions/{key.torch_release}/{key.vendor}/{key.kit_version}/{key.run_id}.html"


def submission_view(audit: SubmissionAudit) -> SubmissionView:
    result = None
    finished = ""
    if audit.passed and audit.report is not None:
        result = result_detail(audit.report)
        finished = audit.report.run.finished_at.isoformat()
    return SubmissionView(
        key=audit.key,
        page=submission_page(audit.key),
        passed=result is not None,
        checks=tuple(
            CheckResult(c.number, text(c.title), c.passed, text(c.why)) for c in audit.checks
        ),
        result=result,
        finished_sort=finished or audit.key.run_id,
    )


@dataclass(frozen=True)
class Cell:
    mark: str
    css: str
    #: Hover text: the status and message.
    title: str
    #: Why the test did not run (skipped cells), shown in the cell.
    reason: str


def matrix_cell(result: ResultDetail, test_id: str) -> Cell:
    row = result.records.get(test_id)
    if row is None:
        return Cell("–", "none", "no record: the run did not report this test", "")
    if row.css == "pass":
        return Cell("✓", "pass", row.outcome, "")
    if row.css == "fail":
        return Cell("✗", "fail", row.outcome, "")
    return Cell("skipped", "skip", row.outcome, row.reason)


@dataclass(frozen=True)
class MatrixRow:
    test_id: str
    cells: tuple[Cell, ...]
    #: Per column, the cell of the model's training step (``.../train``), on the model's eager
    #: row; empty on the other rows and where the standard has no training steps.
    training: tuple[Cell, ...] = ()


@dataclass(frozen=True)
class ReleaseView:
    release: str
    #: Each vendor's latest audited result of the release (newest run finish), by vendor.
    columns: tuple[SubmissionView, ...]
    rows: tuple[MatrixRow, ...]

    @property
    def training(self) -> bool:
        """Whether a training sub-column shows beside each vendor's column."""
        return any(row.training for row in self.rows)


def _matrix_ids(
    columns: Sequence[SubmissionView], audits: Mapping[SubmissionKey, Report]
) -> list[str]:
    ids: set[str] = set()
    for column in columns:
        report = audits[column.key]
        try:
            ids.update(load_standard(report.standard.version).test_ids(MATRIX_TIER))
        except InputError:
            pass  # a standard this kit lacks: its reports' own records still give rows
        ids.update(r.id for r in report.records if tier_of(r.id) == MATRIX_TIER)
    return sorted(ids)


def latest_by_vendor(views: Sequence[SubmissionView]) -> tuple[SubmissionView, ...]:
    latest: dict[str, SubmissionView] = {}
    for item in sorted(views, key=lambda v: (v.finished_sort, v.key)):
        if item.result is not None:
            latest[item.key.vendor] = item
    return tuple(latest[vendor] for vendor in sorted(latest))


def release_view(
    release: str, views: Sequence[SubmissionView], reports: Mapping[SubmissionKey, Report]
) -> ReleaseView:
    columns = latest_by_vendor([v for v in views if v.key.torch_release == release])
    ids = _matrix_ids(columns, reports)
    steps = {test_id for test_id in ids if is_training_step(test_id)}
    rows = []
    for test_id in ids:
        if test_id in steps:
            continue  # a cell of its model's eager row
        step = _training_step_of(test_id)
        training = _cells(columns, step) if step in steps else ()
        rows.append(MatrixRow(text(test_id), _cells(columns, test_id), training))
    return ReleaseView(release, columns, tuple(rows))


def _cells(columns: Sequence[SubmissionView], test_id: str) -> tuple[Cell, ...]:
    cells = []
    for column in columns:
        assert column.result is not None
        cells.append(matrix_cell(column.result, test_id))
    return tuple(cells)


def _training_step_of(test_id: str) -> str | None:
    """``models/hf/llama/train`` for the eager row ``models/hf/llama/eager``, else None."""
    model, _, flow = test_id.rpartition("/")
    return f"{model}/{TRAIN}" if flow == EAGER else None


@dataclass(frozen=True)
class TrendPoint:
    x: str
    y: str
    label: str
    rate: str


@dataclass(frozen=True)
class Trend:
    """A pass-rate-over-time plot's numbers; the template draws them as SVG."""

    width: int = 640
    height: int = 230
    left: int = 96
    top: int = 16
    plot_width: int = 448
    plot_height: int = 150
    #: The pass rate at the bottom of the y axis: rates sit near 100%, so the axis starts at
    #: the tenth below the lowest one, where differences show.
    floor: float = 0.0
    points: tuple[TrendPoint, ...] = ()

    @property
    def polyline(self) -> str:
        return " ".join(f"{p.x},{p.y}" for p in self.points)

    def y_of(self, rate: float) -> str:
        share = (rate - self.floor) / (1 - self.floor)
        return f"{self.top + self.plot_height * (1 - share):.1f}"

    @property
    def ticks(self) -> tuple[tuple[str, str], ...]:
        """(y, label) of the axis's bottom, middle and top lines."""
        rates = (self.floor, (self.floor + 1) / 2, 1.0)
        return tuple((self.y_of(rate), f"{rate:.0%}") for rate in rates)


def trend(results: Sequence[SubmissionView]) -> Trend:
    """Overall pass rate of each audited result, oldest first, one step apart on the x axis."""
    rates = []
    for item in results:
        assert item.result is not None
        rates.append(item.result.overall_rate or 0.0)
    floor = min(math.floor(min(rates, default=1.0) * 10) / 10, 0.9)
    plot = Trend(floor=floor)
    step = plot.plot_width / max(len(results) - 1, 1)
    points = []
    for index, (item, rate) in enumerate(zip(results, rates, strict=True)):
        assert item.result is not None
        x = plot.left + (step * index if len(results) > 1 else plot.plot_width / 2)
        points.append(
            TrendPoint(
                x=f"{x:.1f}",
                y=plot.y_of(rate),
                label=f"kit {item.key.kit_version}, {item.result.finished[:10]}",
                rate=rate_text(item.result.overall_rate),
            )
        )
    return dataclasses.replace(plot, points=tuple(points))


@dataclass(frozen=True)
class VendorView:
    vendor: str
    page: str
    name: str
    docs_url: str | None
    docs_text: str
    #: The latest audited result per release, newest release first.
    latest: tuple[SubmissionView, ...]
    #: Every submission of the vendor, newest first, failed audits included.
    submissions: tuple[SubmissionView, ...]
    trend: Trend


def vendor_view(vendor: str, views: Sequence[SubmissionView]) -> VendorView:
    own = sorted(
        (v for v in views if v.key.vendor == vendor), key=lambda v: (v.finished_sort, v.key)
    )
    results = [v for v in own if v.result is not None]
    releases = sorted({v.key.torch_release for v in results}, key=_release_order, reverse=True)
    latest = tuple(
        latest_by_vendor([v for v in results if v.key.torch_release == r])[0] for r in releases
    )
    newest = latest[0].result if latest else None
    return VendorView(
        vendor=vendor,
        page=f"vendors/{vendor}.html",
        name=newest.vendor_name if newest else vendor,
        docs_url=newest.docs_url if newest else None,
        docs_text=newest.docs_text if newest else "",
        latest=latest,
        submissions=tuple(reversed(own)),
        trend=trend(results),
    )


def _release_order(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


@dataclass(frozen=True)
class Site:
    releases: tuple[ReleaseView, ...]
    vendors: tuple[VendorView, ...]
    submissions: tuple[SubmissionView, ...]
    repository_checks: tuple[CheckResult, ...]

    @property
    def failed_audits(self) -> tuple[SubmissionView, ...]:
        return tuple(s for s in self.submissions if not s.passed)


def site_model(audit: RepositoryAudit) -> Site:
    views = [submission_view(submission) for submission in audit.submissions]
    reports = {s.key: s.report for s in audit.submissions if s.passed and s.report is not None}
    releases = sorted({v.key.torch_release for v in views}, key=_release_order, reverse=True)
    vendors = sorted({v.key.vendor for v in views})
    return Site(
        releases=tuple(release_view(r, views, reports) for r in releases),
        vendors=tuple(vendor_view(vendor, views) for vendor in vendors),
        submissions=tuple(sorted(views, key=lambda v: v.key)),
        repository_checks=tuple(
            CheckResult(c.number, text(c.title), c.passed, text(c.why)) for c in audit.checks
        ),
    )
