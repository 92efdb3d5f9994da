"""``ckit show``: a finished run's report, read in the terminal.

The grade and why, one row of counts per tier, the failures grouped by op and dtype, and the
largest errors the records hold. Every field comes from a report.json someone else may have
written; the text form escapes what it prints (``kit.printable``), the JSON form is ASCII.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from kit.grading.certified import packages_text, where_it_ran
from kit.grading.wording import RunWording, run_wording
from kit.printable import printable
from kit.report.attribution_summary import REPORTED_BY, AttributionTotals
from kit.report.core_aten import CoreAtenCoverage, CoreAtenJson
from kit.report.failing import failing_tests
from kit.report.figures import Figures, figures_of
from kit.report.id_order import in_natural_order, natural_id_key
from kit.report.model import Report
from kit.report.op_dtype import group_key
from kit.report.read import LoadedReport
from kit.report.release_drift import ReleaseDrift, drift_words, release_drift
from kit.report.summary import Counts
from kit.report.training_summary import TrainingStep, passed_words, training_steps_of
from kit.results import NOT_RUN_STATUSES, Status
from kit.rundir import REPORT_JSON, PreviousRun
from kit.tiers.distributed.transport import CollectiveTransportsJson, collective_transports
from kit.views.performance import performance_json, performance_lines

#: Statuses always shown as a column; others only when some tier has one.
_ALWAYS = (Status.PASS.value,)
MISSING = "MISSING"


class TierRowJson(TypedDict):
    tier: str
    statuses: dict[str, int]
    missing: int
    total: int
    pass_rate: float | None


class FailureGroupJson(TypedDict):
    op: str
    dtype: str
    count: int
    statuses: dict[str, int]


class SuspectedRootJson(TypedDict):
    op: str
    dtype: str
    tests: list[str]


class TopErrorJson(TypedDict):
    id: str
    status: str
    figures: dict[str, float | int | str]


class ShownKitJson(TypedDict):
    version: str
    digest: str
    released: bool


class ShownGradeJson(TypedDict):
    name: str
    reasons: list[str]
    #: ``partial`` for a narrowed run (``kit.grading.wording``), else None.
    qualifier: str | None
    #: A partial run's grade of its own tests, else None.
    earned: str | None


class ShownRunJson(TypedDict):
    complete: bool
    tiers: list[str]
    select: list[str]


class FailuresJson(TypedDict):
    tests: int
    groups: list[FailureGroupJson]


class FallbackOpJson(TypedDict):
    op: str
    tests: int


class ShownAttributionJson(TypedDict):
    reported_by: str
    tests: int
    tests_with_fallback: int
    native_rate: float | None
    fallback_ops: list[FallbackOpJson]


class CertifiedJson(TypedDict):
    dtypes: list[str]
    flows: list[str]
    ran_on: str
    #: As the report's environment section has it (the vendor's own words).
    vendor_packages: object


class ShowJson(TypedDict):
    """``ckit show --json``."""

    report: str
    report_sha256: str
    vendor: str
    kit: ShownKitJson
    standard: str
    grade: ShownGradeJson
    run: ShownRunJson
    tiers: list[TierRowJson]
    failures: FailuresJson
    top_errors: list[TopErrorJson]
    suspected_roots: list[SuspectedRootJson]
    attribution: ShownAttributionJson | None
    #: The release's core ATen ops the device calls reached (``kit.report.core_aten``).
    core_aten: CoreAtenJson | None
    #: Each step's ``TrainingStep`` fields, all text.
    training: list[dict[str, str]]
    release_drift: dict[str, list[str]]
    #: The ``PreviousRun`` fields, text.
    rerun_of: dict[str, str] | None
    #: Where the distributed tests' collectives ran (``kit.tiers.distributed.transport``).
    collectives: CollectiveTransportsJson | None
    certified: CertifiedJson
    #: The model tier's performance figures (``kit.views.performance``).
    performance: list[dict[str, object]]


@dataclass(frozen=True)
class TierRow:
    tier: str
    statuses: Mapping[str, int]
    missing: int
    total: int
    pass_rate: float | None

    def to_json(self) -> TierRowJson:
        return {"tier": self.tier, "statuses": dict(self.statuses), "missing": self.missing,
                "total": self.total, "pass_rate": self.pass_rate}


@dataclass(frozen=True)
class FailureGroup:
    op: str
    dtype: str
    statuses: Mapping[str, int]

    @property
    def count(self) -> int:
        return sum(self.statuses.values())

    def to_json(self) -> FailureGroupJson:
        return {"op": self.op, "dtype": self.dtype, "count": self.count,
                "statuses": dict(self.statuses)}


@dataclass(frozen=True)
class SuspectedRoot:
    """Failing composite tests blamed on one failing primitive (op, dtype): ``details.suspects``
    (``kit.grading.blame``)."""

    op: str
    dtype: str
    tests: tuple[str, ...]

    def to_json(self) -> SuspectedRootJson:
        return {"op": self.op, "dtype": self.dtype, "tests": list(self.tests)}


@dataclass(frozen=True)
class TopError:
    test_id: str
    status: str
    figures: Figures

    def to_json(self) -> TopErrorJson:
        return {"id": self.test_id, "status": self.status, "figures": self.figures.to_json()}


@dataclass(frozen=True)
class ShowView:
    source: LoadedReport
    tiers: tuple[TierRow, ...]
    groups: tuple[FailureGroup, ...]
    top_errors: tuple[TopError, ...]
    #: What the run.json beside the report names as the run it reran (``--rerun-failed``).
    rerun_of: PreviousRun | None = None
    roots: tuple[SuspectedRoot, ...] = ()
    #: The model tier's training steps (none unless the standard has them).
    training: tuple[TrainingStep, ...] = ()
    #: A canary's tests the installed release lacks or changed (none on the standard's own).
    drift: ReleaseDrift = ReleaseDrift((), ())
    #: The run in the words every command uses (``kit.grading.wording``).
    wording: RunWording = RunWording("", None, "")

    @property
    def report(self) -> Report:
        return self.source.report

    def to_json(self) -> ShowJson:
        report = self.report
        return {
            "report": str(self.source.path),
            "report_sha256": self.source.sha256,
            "vendor": report.vendor_id,
            "kit": {"version": report.kit.version, "digest": report.kit.digest,
                    "released": report.kit.released},
            "standard": report.standard.version,
            "grade": {"name": report.grade.name, "reasons": list(report.grade.reasons),
                      "qualifier": self.wording.qualifier,
                      "earned": self.wording.to_json()["earned"]},
            "run": {"complete": report.run.complete, "tiers": list(report.run.tiers),
                    "select": list(report.run.select)},
            "tiers": [row.to_json() for row in self.tiers],
            "failures": {"tests": sum(g.count for g in self.groups),
                         "groups": [g.to_json() for g in self.groups]},
            "top_errors": [e.to_json() for e in self.top_errors],
            "suspected_roots": [root.to_json() for root in self.roots],
            "attribution": _attribution_json(report.attribution),
            "core_aten": _core_aten_json(core_aten_of(report)),
            "training": [dataclasses.asdict(step) for step in self.training],
            "release_drift": self.drift.to_json(),
            "rerun_of": dataclasses.asdict(self.rerun_of) if self.rerun_of else None,
            "collectives": _collectives_json(report),
            "certified": self._certified(),
            "performance": performance_json(report),
        }

    def _certified(self) -> CertifiedJson:
        vendor = self.report.vendor
        environment = self.report.environment
        return {
            "dtypes": list(vendor.dtypes),
            "flows": list(vendor.flows),
            "ran_on": where_it_ran(environment),
            "vendor_packages": environment.get("vendor_packages"),
        }


def _collectives_json(report: Report) -> CollectiveTransportsJson | None:
    transports = collective_transports(record.details for record in report.records)
    return None if transports is None else transports.to_json()


def _attribution_json(totals: AttributionTotals | None) -> ShownAttributionJson | None:
    if totals is None:
        return None
    return {"reported_by": "vendor process",  # the vendor's word (kit.attribution)
            "tests": totals.tests, "tests_with_fallback": totals.tests_with_fallback,
            "native_rate": totals.native_rate,
            "fallback_ops": [{"op": op, "tests": n} for op, n in totals.fallback_ops()]}


def core_aten_of(report: Report) -> CoreAtenCoverage | None:
    """The report's core ATen coverage, of its standard's torch release."""
    return report.summary.core_aten(report.standard.torch_release)


def _core_aten_json(coverage: CoreAtenCoverage | None) -> CoreAtenJson | None:
    return None if coverage is None else coverage.to_json()


def tier_rows(report: Report) -> tuple[TierRow, ...]:
    summary = report.summary
    rows = [_row(tier, counts) for tier, counts in summary.tiers_in_order()]
    return (*rows, _row("all", summary.overall))


def _row(tier: str, counts: Counts) -> TierRow:
    return TierRow(tier, dict(counts.statuses), counts.missing, counts.total, counts.pass_rate)


def failure_groups(failing: Mapping[str, str]) -> tuple[FailureGroup, ...]:
    """Failures per (op, dtype), most failures first."""
    grouped: dict[tuple[str, str], Counter[str]] = {}
    for test_id, status in failing.items():
        grouped.setdefault(group_key(test_id), Counter())[status] += 1
    groups = [FailureGroup(op, dtype, dict(sorted(c.items()))) for (op, dtype), c in
              grouped.items()]
    return tuple(sorted(groups, key=lambda g: (-g.count, g.op, g.dtype)))


def suspected_roots(report: Report) -> tuple[SuspectedRoot, ...]:
    """Failing tests grouped by the (op, dtype) of the primitives they are blamed on, the
    most blamed first; a test blamed on two ops is in both groups."""
    blamed: dict[tuple[str, str], set[str]] = {}
    for record in report.records:
        suspects = record.details.get("suspects")
        if not record.status.is_failure or not isinstance(suspects, list):
            continue
        for suspect in suspects:
            if isinstance(suspect, str):
                blamed.setdefault(group_key(suspect), set()).add(record.id)
    roots = [SuspectedRoot(op, dtype, tuple(in_natural_order(tests)))
             for (op, dtype), tests in blamed.items()]
    return tuple(sorted(roots, key=lambda r: (-len(r.tests), r.op, r.dtype)))


def top_errors(report: Report, limit: int) -> tuple[TopError, ...]:
    """The failing records with the largest errors (relative, then absolute)."""
    found = [
        TopError(r.id, r.status.value, figures)
        for r in report.records
        if r.status.is_failure and (figures := figures_of(r)) is not None
    ]
    found.sort(key=lambda e: (tuple(-x for x in e.figures.rank()), natural_id_key(e.test_id)))
    return tuple(found[:limit])


def show_view(source: LoadedReport, limit: int, rerun_of: PreviousRun | None = None) -> ShowView:
    report = source.report
    return ShowView(
        source=source,
        tiers=tier_rows(report),
        groups=failure_groups(failing_tests(report)),
        top_errors=top_errors(report, limit),
        rerun_of=rerun_of,
        roots=suspected_roots(report),
        training=training_steps_of(report.records),
        drift=release_drift(report),
        wording=run_wording(report),
    )


# -- text ------------------------------------------------------------------------------------

def _header(view: ShowView) -> list[str]:
    report = view.report
    released = "released" if report.kit.released else "not a released kit"
    torch = report.environment.get("torch", {})
    torch_version = torch.get("version", "?") if isinstance(torch, Mapping) else "?"
    scope = "complete" if report.run.complete else _narrowed(report, view.wording)
    lines = [
        f"report: {view.source.path}",
        f"vendor {report.vendor_id} · kit {report.kit.version} ({released}, digest "
        f"{report.kit.digest[:12]}) · standard {report.standard.version} · torch {torch_version}",
        *_certified(report),
        f"run: {scope}",
        f"grade: {view.wording.words()}",
    ]
    if view.rerun_of is not None:
        lines.insert(len(lines) - 1, f"rerun of: {view.rerun_of.dir} (its {REPORT_JSON} sha256 "
                        f"{view.rerun_of.report_sha256[:16]})")
    return lines + [f"  why: {reason}" for reason in report.grade.reasons]


def _certified(report: Report) -> list[str]:
    claims = (
        f"claimed dtypes {', '.join(report.vendor.dtypes)} · flows "
        f"{', '.join(report.vendor.flows)} · ran on {where_it_ran(report.environment)}"
    )
    packages = packages_text(report.environment)
    return [claims] + ([f"vendor packages: {packages}"] if packages else [])


def _narrowed(report: Report, wording: RunWording) -> str:
    select = report.run.select
    shown = ", ".join(select[:3]) + (f" and {len(select) - 3} more" if len(select) > 3 else "")
    shard = f"; shard {report.run.shard}" if report.run.shard is not None else ""
    return f"{wording.qualifier or 'narrowed'} (tiers {', '.join(report.run.tiers)}" + (
        f"; select {shown}" if select else ""
    ) + f"{shard})"


def _columns(rows: tuple[TierRow, ...]) -> list[str]:
    used = {s for row in rows for s, n in row.statuses.items() if n}
    return [s.value for s in Status if s.value in _ALWAYS or s.value in used]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows]


def _rate(rate: float | None) -> str:
    return "—" if rate is None else f"{rate:.2%}"


def _tier_table(rows: tuple[TierRow, ...]) -> list[str]:
    columns = _columns(rows)
    head = ["tier", *columns, "missing", "total", "pass rate"]
    body = [[row.tier, *(str(row.statuses.get(c, 0)) for c in columns), str(row.missing),
             str(row.total), _rate(row.pass_rate)] for row in rows]
    return _table([head, *body])


def _group_lines(groups: tuple[FailureGroup, ...], limit: int) -> list[str]:
    tests = sum(g.count for g in groups)
    if not groups:
        return ["failures: none"]
    lines = [f"failures by op × dtype: {tests} test(s) in {len(groups)} group(s)"]
    rows = [["count", "op", "dtype", "statuses"]] + [
        [str(g.count), g.op, g.dtype or "-",
         ", ".join(f"{s} {n}" for s, n in g.statuses.items())]
        for g in groups[:limit]
    ]
    lines += ["  " + line for line in _table(rows)]
    if len(groups) > limit:
        lines.append(f"  ... and {len(groups) - limit} more group(s) (--limit, or --json)")
    return lines


def _root_lines(roots: tuple[SuspectedRoot, ...], limit: int) -> list[str]:
    if not roots:
        return []
    lines = ["failures by suspected root (a failing primitive they call):"]
    for root in roots[:limit]:
        shown = ", ".join(root.tests[:3]) + (f" and {len(root.tests) - 3} more"
                                              if len(root.tests) > 3 else "")
        lines.append(f"  {root.op} {root.dtype or '-'}: {len(root.tests)} test(s): {shown}")
    return lines


def _attribution_lines(totals: AttributionTotals | None, limit: int) -> list[str]:
    """Where the device calls ran their ops: the native rate and the ops that fell back."""
    if totals is None:
        return []
    fallback = totals.fallback_ops()
    lines = [f"what ran on the device ({REPORTED_BY}): {_rate(totals.native_rate)} of the "
             f"device ops of {totals.tests} test(s) ran natively; "
             f"{totals.tests_with_fallback} test(s) used the backend's fallback"]
    lines += [f"  fallback: {op} in {n} test(s)" for op, n in fallback[:limit]]
    if len(fallback) > limit:
        lines.append(f"  ... and {len(fallback) - limit} more op(s) (--limit, or --json)")
    return lines


def _core_aten_lines(coverage: CoreAtenCoverage | None, limit: int) -> list[str]:
    """The core ATen line, then the first core ops no device call reached."""
    if coverage is None:
        return []
    missed = coverage.unexercised()
    lines = [coverage.text()]
    if missed:
        more = f" and {len(missed) - limit} more (--json)" if len(missed) > limit else ""
        lines.append(f"  not exercised: {', '.join(missed[:limit])}{more}")
    return lines


def _training_lines(steps: tuple[TrainingStep, ...], limit: int) -> list[str]:
    """How many models' training steps passed, and where each failing one went off first."""
    if not steps:
        return []
    not_run = [step for step in steps if step.status in NOT_RUN_STATUSES]
    failing = [step for step in steps if not step.passed and step.status not in NOT_RUN_STATUSES]
    unran = f" ({len(not_run)} not run: not applicable or skipped)" if not_run else ""
    lines = [f"training steps (model tier): {passed_words(steps)}{unran}"]
    lines += [f"  {step.test_id}  {step.status}  {step.first_off or '-'}"
              for step in failing[:limit]]
    if len(failing) > limit:
        lines.append(f"  ... and {len(failing) - limit} more (--limit, or --json)")
    return lines


def _error_lines(errors: tuple[TopError, ...]) -> list[str]:
    if not errors:
        return []
    lines = ["top errors (largest max_rel_err, then max_abs_err):"]
    return lines + [f"  {e.test_id}  {e.status}  {e.figures.text()}" for e in errors]


def repro_commands(report: Report) -> tuple[tuple[str, str], ...]:
    """(id, command) of each failing test whose record carries its rerun command
    (``details.repro.pytest``, the unit tier's), in natural id order."""
    found: dict[str, str] = {}
    for record in report.records:
        repro = record.details.get("repro")
        command = repro.get("pytest") if isinstance(repro, Mapping) else None
        if record.status.is_failure and isinstance(command, str):
            found[record.id] = command
    return tuple((test_id, found[test_id]) for test_id in in_natural_order(found))


def interpreter_words(report: Report) -> str:
    """The interpreter a repro command's ``python`` means, as far as the report records it: the
    environment keeps the run's Python version and implementation, never its path."""
    python = report.environment.get("python")
    recorded = python if isinstance(python, Mapping) else {}
    name = " ".join(str(recorded[key]) for key in ("implementation", "version") if key in recorded)
    said = f"the run's Python ({name})" if name else "the run's Python (not recorded)"
    return f"`python` is {said}, in the environment that ran it; the report records no path"


def _repro_lines(report: Report, limit: int) -> list[str]:
    commands = repro_commands(report)
    if not commands:
        return []
    lines = [f"reproduce a failure ({interpreter_words(report)}):"]
    for test_id, command in commands[:limit]:
        lines += [f"  {test_id}", f"    {command}"]
    if len(commands) > limit:
        lines.append(f"  ... and {len(commands) - limit} more (--limit, or --json)")
    return lines


def _drift_lines(view: ShowView, limit: int) -> list[str]:
    drift = view.drift
    if not drift:
        return []
    lines = [f"release: {drift_words(drift, view.report.standard.version)}"]
    lines += [f"  not in release: {i}" for i in drift.not_in_release[:limit]]
    lines += [f"  inputs changed: {i}" for i in drift.inputs_changed[:limit]]
    return lines


def show_lines(view: ShowView, limit: int) -> list[str]:
    """The report as terminal lines, every one printable."""
    sections = [
        _header(view), [""], _tier_table(view.tiers), [""], _group_lines(view.groups, limit),
    ]
    roots = _root_lines(view.roots, limit)
    if roots:
        sections += [[""], roots]
    attribution = _attribution_lines(view.report.attribution, limit)
    if attribution:
        sections += [[""], attribution + _core_aten_lines(core_aten_of(view.report), limit)]
    transports = collective_transports(record.details for record in view.report.records)
    if transports is not None:
        sections += [[""], [transports.words()]]
    training = _training_lines(view.training, limit)
    if training:
        sections += [[""], training]
    drift = _drift_lines(view, limit)
    if drift:
        sections += [[""], drift]
    performance = performance_lines(view.report, limit)
    if performance:
        sections += [[""], performance]
    errors = _error_lines(view.top_errors)
    if errors:
        sections += [[""], errors]
    repros = _repro_lines(view.report, limit)
    if repros:
        sections += [[""], repros]
    return [printable(line) for section in sections for line in section]
