"""What the portal's pages show, read from a repository audit.

Only submissions whose audit passed are results; the others appear as failed audits with every
check line. Every string that came from a submission goes through ``printable`` (no control or
bidi characters reach a page), and everything is sorted, so the same audit gives the same site.
Each release's verdict is ``kit.repository.gate.evaluate_gate``'s, shown as it decides it; who a
vendor is (name, contact, docs link) comes only from the root-signed keyring
(``RepositoryAudit.identities``), never from a report's own text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kit.errors import InputError
from kit.flows import flow_names
from kit.flows.interface import Stage
from kit.grading.wording import run_wording
from kit.patterns import matches
from kit.portal.performance import (
    PerformanceRun,
    PerformanceVendor,
    ReleasePerformance,
    release_performance,
)
from kit.portal.standard_page import StandardView, standard_view
from kit.portal.trend import Trend, TrendResult, trend
from kit.printable import printable
from kit.report.figures import figure_text
from kit.report.id_order import in_natural_order, natural_id_key
from kit.report.model import Report
from kit.report.summary import Summary
from kit.repository.gate import (
    GatePolicy,
    GateResult,
    VendorGate,
    Verdict,
    evaluate_gate,
    is_canary,
    percent,
)
from kit.repository.interface import (
    CheckResult,
    RepositoryAudit,
    SubmissionAudit,
    first_failure_of,
)
from kit.repository.layout import SubmissionKey, torch_release_of
from kit.results import FAILURE_STATUSES, NOT_RUN_STATUSES, Status, TestRecord, tier_of
from kit.signing.keyring import VendorIdentity
from kit.standard import load_standard
from kit.standard.catalogue import carried_versions
from kit.test_ids import TestId
from kit.tiers.models.tier import ModelsTier
from kit.tiers.registry import tier_names
from kit.tiers.unit.tier import UnitTier

#: The tier whose tests are the matrix's rows.
MATRIX_TIER = ModelsTier.name


def text(value: Any) -> str:
    return printable(str(value))


def printable_checks(checks: Sequence[CheckResult]) -> tuple[CheckResult, ...]:
    """An audit's checks as a page shows them: its strings printable, a skipped check still
    skipped (not run because an earlier one failed: no failure of its own)."""
    return tuple(CheckResult(c.number, text(c.title), c.passed, text(c.why), c.skipped)
                 for c in checks)


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
    """A verified report, as the pages show it (who the vendor is comes from the keyring, never
    from the report's text)."""

    #: The run's grade as every command words it (``kit.grading.wording``): a narrowed run is
    #: "partial", never a bare "non-conformant"; in a few words, in one, and in full.
    grade: str
    grade_headline: str
    grade_words: str
    grade_reasons: tuple[str, ...]
    kit_version: str
    kit_released: bool
    standard: str
    started: str
    finished: str
    overall_rate: float | None
    #: The locked tests the run's selection counted (its pass rate's denominator's scope).
    tests: int
    #: The run's selection as words: results of the same selection are comparable.
    selection: str
    tiers: tuple[TierRow, ...]
    flows: tuple[FlowRow, ...]
    #: Where the device calls ran their ops, as a sentence (None: not recorded).
    attribution: str | None
    #: The share of device ops that ran natively, as text ("–": not recorded).
    native: str
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
    #: When the run finished, UTC, as a run id names it (``20261120T070000Z``): a verified
    #: report's time, or a failed audit's run id, in one format so the two order together.
    finished_sort: str
    #: A ``--canary`` run: listed with its audit, never a vendor's result (``gate.is_canary``).
    canary: bool = False

    @property
    def first_failure(self) -> CheckResult | None:
        return first_failure_of(self.checks)


def group_of(test_id: str) -> str:
    """``unit/opinfo/add`` for ``unit/opinfo/add/float32/0``; ``models/hf`` for a model test."""
    try:
        parsed = TestId.split(test_id)
    except InputError:
        return test_id  # not an id's form: a group of its own
    keep = 2 if parsed.tier == UnitTier.name else 1
    return parsed.prefix(min(keep, len(parsed.segments) - 1))


def _detail(details: Mapping[str, Any], name: str) -> str:
    value = details.get(name)
    return "" if value is None else text(figure_text(value))


def test_row(report: Report, record: TestRecord) -> TestRow:
    status = record.status.value
    return TestRow(
        id=text(record.id),
        status=text(status),
        css=status_css(status),
        outcome=text(f"{status}: {record.message}" if record.message else status),
        message=text(record.message),
        reason=text(_skip_reason(report, record)),
        max_abs_err=_detail(record.details, "max_abs_err"),
        max_rel_err=_detail(record.details, "max_rel_err"),
    )


def _skip_reason(report: Report, record: TestRecord) -> str:
    """Why a SKIPPED / NOT_APPLICABLE test did not run (the first manifest entry matching a
    skipped test, as the runner chose it); empty for tests that ran."""
    if record.status is Status.SKIPPED:
        entry = next((e for e in report.skips.entries if matches(record.id, e.test)), None)
        if entry is not None:
            return f"{entry.reason} ({entry.tracking}, expires {entry.expires.isoformat()})"
    if record.status in NOT_RUN_STATUSES:
        reason = record.details.get("reason")
        return str(reason) if reason else record.message
    return ""


def _groups(rows: Sequence[TestRow]) -> tuple[TestGroup, ...]:
    grouped: dict[str, list[TestRow]] = {}
    for row in rows:
        grouped.setdefault(group_of(row.id), []).append(row)
    return tuple(
        TestGroup(
            name=name,
            rows=tuple(sorted(members, key=lambda row: natural_id_key(row.id))),
            failed=sum(1 for r in members if r.css == "fail"),
            passed=sum(1 for r in members if r.css == "pass"),
            not_run=sum(1 for r in members if r.css == "skip"),
        )
        for name, members in sorted(grouped.items())
    )


def _tier_rows(summary: Summary) -> tuple[TierRow, ...]:
    rows = []
    for tier, counts in summary.tiers.items():
        failed = sum(counts.statuses.get(s.value, 0) for s in FAILURE_STATUSES)
        rows.append(
            TierRow(
                tier=text(tier),
                total=counts.total,
                ran=counts.ran,
                passed=counts.passed,
                failed=failed,
                not_run=counts.total - counts.ran,
                missing=counts.missing,
                rate=rate_text(counts.rate_counting_missing()),
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
    core = report.summary.core_aten(report.standard.torch_release)  # kit.report.core_aten
    return text(
        f"{rate_text(totals.native_rate)} of the device ops of {totals.tests} test(s) ran "
        f"natively; {totals.tests_with_fallback} test(s) used the backend's fallback"
        + (f": {through}" if fallback else "") + (f"; {core.text()}" if core else "")
    )


def selection_of(report: Report) -> str:
    """What the run set out to cover: its standard, tiers and ``--select`` patterns."""
    run = report.run
    chosen = f"--select {' '.join(run.select)}" if run.select else "every test"
    return f"standard {report.standard.version}, tiers {', '.join(run.tiers)}, {chosen}"


def rate_of(result: ResultDetail, tier: str) -> str:
    """The tier's pass rate in ``result`` ("–": the run did not cover the tier)."""
    return next((row.rate for row in result.tiers if row.tier == tier), "–")


def result_detail(report: Report) -> ResultDetail:
    rows = [test_row(report, record) for record in report.records]
    wording = run_wording(report)
    return ResultDetail(
        grade=text(wording.short()),
        grade_headline=text(wording.headline),
        grade_words=text(wording.words()),
        grade_reasons=tuple(text(reason) for reason in report.grade.reasons),
        kit_version=text(report.kit.version),
        kit_released=report.kit.released,
        standard=text(f"{report.standard.version} (torch {report.standard.torch_release})"),
        started=report.run.started_at.isoformat(),
        finished=report.run.finished_at.isoformat(),
        # passed / (ran + locked tests without a record): a missing test counts as failed.
        overall_rate=report.summary.overall.rate_counting_missing(),
        tests=report.summary.overall.total,
        selection=text(selection_of(report)),
        tiers=_tier_rows(report.summary),
        flows=_flow_rows(report),
        attribution=_attribution_text(report),
        native=rate_text(report.attribution.native_rate if report.attribution else None),
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
        finished = audit.report.run.finished_at.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return SubmissionView(
        key=audit.key,
        page=submission_page(audit.key),
        passed=result is not None,
        checks=printable_checks(audit.checks),
        result=result,
        finished_sort=finished or _stamp(audit.key),
        canary=is_canary(audit),
    )


@dataclass(frozen=True)
class Cell:
    mark: str
    css: str
    #: Hover text: the status and message, or why the test did not run.
    title: str


#: A matrix cell of a test with no record: the run did not cover it.
NOT_RUN = Cell("–", "none", "not run: the run did not cover this test")
#: A vendor with no audited result for the release: one cell across its columns.
NO_RESULT = Cell("no audited result", "none", "no submission of the release passed its audit")


def matrix_cell(result: ResultDetail, test_id: str) -> Cell:
    """✓, ✗, "n/a" (the kit's not-applicable: never a skip) or "–", not run (no record, or the
    vendor's skip manifest), with the status and message or reason as hover text."""
    row = result.records.get(test_id)
    if row is None:
        return NOT_RUN
    if row.css == "pass":
        return Cell("✓", "pass", row.outcome)
    if row.css == "fail":
        return Cell("✗", "fail", row.outcome)
    if row.status == Status.NOT_APPLICABLE.value:
        return Cell("n/a", "na", f"not applicable: {row.reason or row.message}")
    return Cell("–", "skip", f"not run: {row.status}: {row.reason or row.message}")


def model_of(test_id: str) -> tuple[str, str]:
    """(``hf/gpt2``, ``eager``) for ``models/hf/gpt2/eager``: the row and the sub-column."""
    parts = TestId.split(test_id).segments
    return "/".join(parts[:-1]), parts[-1]


@dataclass(frozen=True)
class MatrixRow:
    model: str
    #: Per vendor (the release's order), one cell per flow, or one ``NO_RESULT`` cell.
    cells: tuple[tuple[Cell, ...], ...]


@dataclass(frozen=True)
class VendorGateView:
    """A vendor of a release as the gate judged it, with what the index shows of it."""

    vendor: str
    name: str
    page: str
    gate: VendorGate
    latest: SubmissionView | None
    #: From the root-signed keyring (None: no plain web link there).
    docs_url: str | None = None
    #: The matrix's sub-columns of this vendor (the flows it claims or ran, in the release's
    #: order) and those folded away: flows it does not claim, where nothing ran.
    flows: tuple[str, ...] = ()
    folded: tuple[str, ...] = ()
    #: The newest submission of the release, newer than ``latest``, whose audit failed.
    newer_failed: SubmissionView | None = None

    @property
    def required(self) -> bool:
        return self.gate.required

    @property
    def grade(self) -> str:
        """The grade in one word ("partial" for a narrowed run); ``grade_words`` in full."""
        return self.latest.result.grade_headline if self.latest and self.latest.result else "–"

    @property
    def grade_words(self) -> str:
        return self.latest.result.grade_words if self.latest and self.latest.result else ""

    @property
    def native(self) -> str:
        return self.latest.result.native if self.latest and self.latest.result else "–"

    def rate(self, tier: str) -> str:
        """The latest result's pass rate of ``tier`` ("–": no result, or it ran no such tier)."""
        return rate_of(self.latest.result, tier) if self.latest and self.latest.result else "–"

    @property
    def clock(self) -> str:
        """The verdict with the 72-hour clock: "fixing (12h left)", "failed: unresolved..."."""
        return text(self.gate.verdict_text)

    @property
    def breach_count(self) -> int:
        """How many tests of the latest result fail for longer than the window."""
        return len(self.gate.breaches)

    @property
    def css(self) -> str:
        if self.gate.verdict is Verdict.PASSES:
            return "pass"
        return "fail" if self.gate.blocks_release else "skip"


@dataclass(frozen=True)
class StandardLink:
    """A standard a release is certified under, and its page on the site."""

    version: str
    torch_release: str
    page: str


@dataclass(frozen=True)
class ReleaseView:
    release: str
    gate: GateResult
    #: Why the gate is closed, one line each (empty when open).
    reasons: tuple[str, ...]
    vendors: tuple[VendorGateView, ...]
    #: The matrix's sub-columns any vendor shows: the last part of the model test ids.
    flows: tuple[str, ...]
    rows: tuple[MatrixRow, ...]
    #: The tiers the vendors' latest results ran, in report order: the index's rate columns.
    tiers: tuple[str, ...] = ()
    standards: tuple[StandardLink, ...] = ()

    @property
    def verdict(self) -> str:
        return "OPEN" if self.gate.open else "CLOSED"


def _model_ids(views: Sequence[VendorGateView], reports: Mapping[SubmissionKey, Report]
               ) -> list[str]:
    """The locked model ids of every standard of the release's results (the current standard's
    when there is none), and any the reports recorded beside them."""
    versions: set[str | None] = {reports[v.latest.key].standard.version
                                 for v in views if v.latest}
    ids: set[str] = set()
    for version in versions or {None}:
        try:
            ids.update(load_standard(version).test_ids(MATRIX_TIER))
        except InputError:
            pass  # a standard this kit lacks: its reports' own records still give rows
    for column in views:
        if column.latest:
            records = reports[column.latest.key].records
            ids.update(r.id for r in records if tier_of(r.id) == MATRIX_TIER)
    return in_natural_order(ids)


def _cells(view: VendorGateView, model: str) -> tuple[Cell, ...]:
    if view.latest is None or view.latest.result is None:
        return (NO_RESULT,)
    prefix = f"{MATRIX_TIER}/{model}"
    return tuple(matrix_cell(view.latest.result, f"{prefix}/{flow}") for flow in view.flows)


def folded_flows(report: Report, flows: Sequence[str]) -> tuple[str, ...]:
    """The sub-columns of ``flows`` that are flows ``report``'s vendor does not claim and where
    none of its model tests ran: columns of "n/a" and "–" that say nothing of the vendor."""
    ran = {model_of(r.id)[1] for r in report.records
           if tier_of(r.id) == MATRIX_TIER and r.status not in NOT_RUN_STATUSES}
    known = set(flow_names())
    return tuple(f for f in flows if f in known and f not in report.vendor.flows and f not in ran)


def _stamp(key: SubmissionKey) -> str:
    """When the run finished, as its run id names it (``20261120T070000Z``): one format for a
    passed and a failed submission alike, so they compare."""
    return key.run_id.split("-", 1)[0]


def _newer_failed(views: Iterable[SubmissionView], gate: VendorGate, release: str
                  ) -> SubmissionView | None:
    """The newest failed audit of ``gate``'s vendor and ``release`` newer than its result."""
    shown = _stamp(gate.latest.key) if gate.latest else ""
    failed = [v for v in views if v.key.vendor == gate.vendor and v.key.torch_release == release
              and not v.passed and _stamp(v.key) > shown]
    return max(failed, key=lambda v: (_stamp(v.key), v.key)) if failed else None


def _reasons(gate: GateResult, names: Mapping[str, str]) -> tuple[str, ...]:
    lines = [*gate.closures]  # the gate fails closed on these whatever the vendors say
    lines += [
        f"{names[v.vendor]} ({v.vendor}{', required' if v.required else ''}): {v.verdict_text}"
        + (f": {v.why}" if v.why else "")
        + (f"; {len(v.breaches)} tests failing past the window" if v.breach_closes and v.breaches
           else "")
        for v in gate.vendors
        if v.blocks_release
    ]
    lines += [f"repository check {c.number} failed: {c.title}: {c.why}"
              for c in gate.repository_failures]
    return tuple(text(line) for line in lines)


def standard_page(version: str) -> str:
    return f"standards/{version}.html"


def standards_of(release: str, used: Iterable[str]) -> tuple[StandardLink, ...]:
    """The standards of the release's shown results (``used``), or, with none, the newest
    carried standard that certifies ``release``; newest first."""
    carried = carried_versions()
    versions = [v for v in carried if v in set(used)]
    if not versions:
        certifying = [v for v in carried
                      if torch_release_of(load_standard(v).torch_release) == release]
        versions = certifying[-1:]
    links = []
    for version in reversed(versions):
        standard = load_standard(version)
        links.append(StandardLink(version, standard.torch_release, standard_page(version)))
    return tuple(links)


def _vendor_gate_view(gate: VendorGate, release: str, views: Mapping[SubmissionKey,
                      SubmissionView], vendor: VendorView, flows: Sequence[str],
                      reports: Mapping[SubmissionKey, Report]) -> VendorGateView:
    latest = views[gate.latest.key] if gate.latest else None
    folded = folded_flows(reports[gate.latest.key], flows) if gate.latest else ()
    return VendorGateView(
        vendor=gate.vendor, name=vendor.name, page=vendor.page, gate=gate, latest=latest,
        docs_url=vendor.docs_url,
        flows=tuple(text(f) for f in flows if f not in folded),
        folded=tuple(text(f) for f in folded),
        newer_failed=_newer_failed(views.values(), gate, release),
    )


def release_view(
    gate: GateResult,
    views: Mapping[SubmissionKey, SubmissionView],
    reports: Mapping[SubmissionKey, Report],
    vendors: Mapping[str, VendorView],
) -> ReleaseView:
    judged = [VendorGateView(v.vendor, vendors[v.vendor].name, vendor_page(v.vendor), v,
                             views[v.latest.key] if v.latest else None)
              for v in gate.vendors]
    ids = _model_ids(judged, reports)
    all_flows = sorted({model_of(test_id)[1] for test_id in ids})
    columns = tuple(_vendor_gate_view(v, gate.release, views, vendors[v.vendor], all_flows,
                                      reports) for v in gate.vendors)
    shown = set().union(*(set(c.flows) for c in columns)) if columns else set(all_flows)
    models = sorted({model_of(test_id)[0] for test_id in ids})
    rows = tuple(MatrixRow(text(model), tuple(_cells(view, model) for view in columns))
                 for model in models)
    ran = {row.tier for c in columns if c.latest and c.latest.result
           for row in c.latest.result.tiers}
    names = {name: view.name for name, view in vendors.items()}
    return ReleaseView(
        gate.release, gate, _reasons(gate, names), columns,
        tuple(text(f) for f in all_flows if f in shown), rows,
        tiers=tuple(tier for tier in tier_names() if tier in ran),
        standards=standards_of(gate.release, {reports[c.latest.key].standard.version
                                              for c in columns if c.latest}),
    )


def vendor_page(vendor: str) -> str:
    return f"vendors/{vendor}.html"


def trend_of(results: Sequence[SubmissionView]) -> Trend:
    """The plot of ``results``'s overall pass rates (oldest first), joined by selection."""
    inputs = []
    for item in results:
        assert item.result is not None
        inputs.append(TrendResult(item.page, item.key.kit_version, item.result.finished,
                                  item.result.overall_rate, item.result.tests,
                                  item.result.selection))
    return trend(inputs)


@dataclass(frozen=True)
class FailingRow:
    """A failing test of a vendor's latest result with the start of its streak of failures."""

    id: str
    status: str
    first_failed: str
    hours: int
    breach: bool
    #: The submission of its first failure in this streak (relative to the site root).
    first_page: str


@dataclass(frozen=True)
class ReleaseFailures:
    """A vendor's failing tests of one release, oldest first, as the gate clocked them."""

    release: str
    window_hours: str
    rows: tuple[FailingRow, ...]

    @property
    def breach_count(self) -> int:
        return sum(row.breach for row in self.rows)


def release_failures(gate: GateResult, vendor: str) -> ReleaseFailures | None:
    judged = next((v for v in gate.vendors if v.vendor == vendor and v.latest), None)
    if judged is None:
        return None
    rows = tuple(
        FailingRow(text(test.test_id), test.status.value,
                   test.first_failed.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
                   test.hours, test.breach, submission_page(test.first_submission))
        for test in judged.failing_tests
    )
    return ReleaseFailures(gate.release, f"{gate.policy.max_failing_age_hours:g}", rows)


@dataclass(frozen=True)
class VendorView:
    vendor: str
    page: str
    #: From the root-signed keyring; without an entry there, the vendor id and nothing else.
    name: str
    contact: str
    docs_url: str | None
    identified: bool
    #: The latest audited result per release, newest release first.
    latest: tuple[SubmissionView, ...]
    #: Every submission of the vendor, newest first, failed audits included.
    submissions: tuple[SubmissionView, ...]
    trend: Trend
    #: Per release with a result, newest first: the latest result's failing tests.
    failing: tuple[ReleaseFailures, ...] = ()


def _newest(views: Sequence[SubmissionView]) -> SubmissionView:
    return max(views, key=lambda v: (v.finished_sort, v.key))


def vendor_view(
    vendor: str, views: Sequence[SubmissionView], identity: VendorIdentity | None,
    gates: Sequence[GateResult] = (),
) -> VendorView:
    own = sorted(
        (v for v in views if v.key.vendor == vendor), key=lambda v: (v.finished_sort, v.key)
    )
    results = [v for v in own if v.result is not None and not v.canary]
    releases = sorted({v.key.torch_release for v in results}, key=_release_order, reverse=True)
    latest = tuple(_newest([v for v in results if v.key.torch_release == r]) for r in releases)
    return VendorView(
        vendor=vendor,
        page=vendor_page(vendor),
        name=text(identity.name) if identity else vendor,
        contact=text(identity.contact) if identity else "",
        docs_url=safe_url(identity.docs_url) if identity else None,
        identified=identity is not None,
        latest=latest,
        submissions=tuple(reversed(own)),
        trend=trend_of(results),
        failing=tuple(f for gate in gates if (f := release_failures(gate, vendor)) is not None),
    )


def _release_order(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


@dataclass(frozen=True)
class Site:
    #: When the gate was judged (its 72-hour clocks count to it).
    now: str
    releases: tuple[ReleaseView, ...]
    vendors: tuple[VendorView, ...]
    submissions: tuple[SubmissionView, ...]
    repository_checks: tuple[CheckResult, ...]
    #: The standards the releases link, each with a page of its own.
    standards: tuple[StandardView, ...] = ()
    #: Per release whose results carry model figures, its performance page.
    performance: tuple[ReleasePerformance, ...] = ()

    @property
    def failed_audits(self) -> tuple[SubmissionView, ...]:
        return tuple(s for s in self.submissions if not s.passed)

    def vendor(self, vendor: str) -> VendorView:
        return next(view for view in self.vendors if view.vendor == vendor)


def site_model(audit: RepositoryAudit, policy: GatePolicy, now: dt.datetime) -> Site:
    """The site of ``audit``, each release judged by ``evaluate_gate`` under ``policy`` at
    ``now`` (the current standard's release always has its verdict, results or not)."""
    views = {s.key: submission_view(s) for s in audit.submissions}
    reports = {s.key: s.report for s in audit.submissions if s.passed and s.report is not None}
    releases = {key.torch_release for key in views}
    releases.add(torch_release_of(load_standard().torch_release))
    gates = [evaluate_gate(audit, release, policy, now)
             for release in sorted(releases, key=_release_order, reverse=True)]
    vendors = sorted({key.vendor for key in views} | set(policy.required_vendors))
    identities = {identity.vendor: identity for identity in audit.identities}
    vendor_views = tuple(
        vendor_view(vendor, list(views.values()), identities.get(vendor), gates)
        for vendor in vendors
    )
    by_vendor = {view.vendor: view for view in vendor_views}
    release_views = tuple(release_view(gate, views, reports, by_vendor) for gate in gates)
    linked = sorted({link for release in release_views for link in release.standards},
                    key=lambda link: link.version)
    return Site(
        now=now.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        releases=release_views,
        vendors=vendor_views,
        submissions=tuple(sorted(views.values(), key=lambda v: v.key)),
        repository_checks=printable_checks(audit.checks),
        standards=tuple(standard_view(link.version, link.page) for link in linked),
        performance=tuple(page for release in release_views if (page := release_performance(
            release.release, performance_vendors(release, by_vendor, reports))) is not None),
    )


def performance_vendors(release: ReleaseView, vendors: Mapping[str, VendorView],
                        reports: Mapping[SubmissionKey, Report]) -> tuple[PerformanceVendor, ...]:
    """The release's vendors as its performance page reads them: their audited, non-canary
    results of the release, oldest first, and the latest one the gate judged."""
    chosen = []
    for column in release.vendors:
        results = [v for v in reversed(vendors[column.vendor].submissions)
                   if v.key.torch_release == release.release and v.result and not v.canary]
        runs = {v.key: PerformanceRun(reports[v.key], v.page, v.key.run_id) for v in results}
        latest = runs.get(column.latest.key) if column.latest else None
        chosen.append(PerformanceVendor(column.vendor, column.name, column.page,
                                        tuple(runs.values()), latest))
    return tuple(chosen)
