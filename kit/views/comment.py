"""A run as a markdown comment for a pull request (``ckit show --format comment``).

What a reviewer of an upstream PyTorch change needs at a glance: the run and its grade in the
words every command uses (``kit.grading.wording``: a narrowed run is partial), why, links to the
CI run and the standard, counts per tier (a not-applicable test is not a failure), then every
failure, one line per op × dtype: against a baseline run (the vendor's last certified one), the
regressions first. Long lists fold into ``<details>``, and the whole comment stays well under
GitHub's limit, saying how many lines it cut. Every line is printable and no report text can
close the markdown: ids and statuses go inside code spans with backticks removed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kit.formats.markdown import text as inert
from kit.grading.grade_words import percent
from kit.printable import printable
from kit.report.attribution_summary import REPORTED_BY, AttributionTotals
from kit.report.failing import failing_tests
from kit.report.model import Report
from kit.report.op_dtype import FailureGroup
from kit.report.read import LoadedReport
from kit.report.release_drift import drift_words
from kit.results import NOT_RUN_STATUSES, Status, tier_of
from kit.views.ci_links import CommentLinks
from kit.views.diff import CATEGORIES, ReportDiff, diff_reports
from kit.views.failure_lines import comment_groups, failing_test, worst_words
from kit.views.performance import performance_comment_lines
from kit.views.show import ShowView, TierRow

#: GitHub refuses a comment over 65,536 characters; the comment stays well under it, leaving
#: room for the baseline's line (``kit.cli.comment_baseline``) and a CI's own additions.
MAX_COMMENT_CHARS = 60_000
#: Characters of the grade's first reason in the why-line.
_WHY_CHARS = 600
#: A comment written outside CI.
NO_LINKS = CommentLinks()


def _code(text: str) -> str:
    return "`" + printable(text).replace("`", "'") + "`"


def comment_lines(view: ShowView, baseline: LoadedReport | None, limit: int,
                  links: CommentLinks = NO_LINKS) -> list[str]:
    """The comment, at most ``MAX_COMMENT_CHARS`` characters; ``limit``: the failure groups
    (and listed ids) shown before the rest fold."""
    report = view.report
    failing = _failing(report)
    lines = [*_title(view), *_why(view), *_links(links, report.standard.version), "",
             *_tier_table(view.tiers, failing)]
    lines += _attribution(report.attribution)
    if view.drift:
        lines += ["", f"Release: {drift_words(view.drift, report.standard.version)}."]
        lines += [f"- inputs changed: {_code(test_id)}"
                  for test_id in view.drift.inputs_changed[:limit]]
    regressed: frozenset[str] = frozenset()
    if baseline is not None:
        diff = diff_reports(baseline, view.source, allow_other_standard=True)
        regressed = frozenset(c.test_id for c in diff.changes["regressed"]
                              if c.test_id in failing)
        lines += ["", _against_line(diff, baseline)]
        lines += performance_comment_lines(diff.performance, limit, _code)
    lines += _failure_sections(failing, regressed, baseline is not None, limit)
    return capped(lines, MAX_COMMENT_CHARS)


def _title(view: ShowView) -> list[str]:
    report, wording = view.report, view.wording
    torch = report.environment.get("torch", {})
    torch_version = torch.get("version", "?") if isinstance(torch, Mapping) else "?"
    mark = f"{wording.mark} " if wording.mark else ""
    torch_code = _code(str(torch_version))
    detail = f" ({wording.detail})" if wording.detail else ""
    return [
        f"### ckit {wording.kind()}: {_code(report.vendor_id)} on torch {torch_code}",
        "",
        f"{mark}Grade **{_code(wording.headline)}**{detail} under standard "
        f"{_code(report.standard.version)} (kit {_code(report.kit.version)}).",
    ]


def _why(view: ShowView) -> list[str]:
    """One line: what kept the run from a better grade."""
    wording, reasons = view.wording, view.report.grade.reasons
    if wording.partial is not None and wording.partial.only_narrowed:
        return ["", f"Why: {inert(wording.words(), _WHY_CHARS)}."]
    if not reasons:
        return []
    more = f" (and {len(reasons) - 1} more: `ckit show`)" if len(reasons) > 1 else ""
    return ["", f"Why: {inert(reasons[0], _WHY_CHARS)}{more}"]


def _links(links: CommentLinks, version: str) -> list[str]:
    said = ([f"[CI run]({links.run})"] if links.run else []) + (
        [f"[standard {printable(version)}]({links.standard})"] if links.standard else [])
    return ["", " · ".join(said)] if said else []


def _tier_table(rows: Sequence[TierRow], failing: Mapping[str, Mapping[str, Any]]
                ) -> list[str]:
    """Per tier: passed, failed as the grade counts them (missing tests, and skipped or not
    applicable ones it does not accept), and the tests that rightly did not run, apart: a
    skipped or not-applicable test is no failure."""
    lines = ["| tier | tests | passed | failed | skipped | not applicable |",
             "|---|---:|---:|---:|---:|---:|"]
    for row in rows:
        counted = [t for t in failing.values() if row.tier in ("all", tier_of(t["id"]))]
        not_run = {status: row.statuses.get(status, 0) - sum(t["status"] == status
                                                             for t in counted)
                   for status in NOT_RUN_STATUSES}
        lines.append(f"| {row.tier} | {row.total} | {row.statuses.get(Status.PASS.value, 0)} | "
                     f"{len(counted)} | {not_run[Status.SKIPPED]} | "
                     f"{not_run[Status.NOT_APPLICABLE]} |")
    return lines


def _attribution(totals: AttributionTotals | None) -> list[str]:
    """The native rate, said to be the vendor's word (``kit.attribution``)."""
    if totals is None:
        return []
    rate = "—" if totals.native_rate is None else percent(totals.native_rate)
    return ["", f"Attribution, as {REPORTED_BY}: {rate} of the device ops of {totals.tests} "
                f"test(s) ran natively; {totals.tests_with_fallback} test(s) used the backend's "
                "fallback."]


def _against_line(diff: ReportDiff, baseline: LoadedReport) -> str:
    counts = ", ".join(f"{len(diff.changes[name])} {name}" for name in CATEGORIES)
    outside = (f", {diff.outside_scope} outside one run's selection (not compared)"
               if diff.outside_scope else "")
    return (f"Against {_code(baseline.report.vendor_id)}'s run of standard "
            f"{_code(baseline.report.standard.version)} ({_code(baseline.sha256[:12])}): "
            f"{counts}{outside}.")


def _failing(report: Report) -> dict[str, Mapping[str, Any]]:
    """Every test the grade counts as failed, missing ones included, with its details."""
    details = {record.id: record.details for record in report.records}
    return {test_id: failing_test(test_id, status, details.get(test_id, {}))
            for test_id, status in failing_tests(report).items()}


def _failure_sections(failing: Mapping[str, Mapping[str, Any]], regressed: frozenset[str],
                      against: bool, limit: int) -> list[str]:
    if not failing:
        return ["", "No failures."]
    if not against:
        return _groups_section("Failing", "", list(failing.values()), limit)
    rest = [test for test_id, test in failing.items() if test_id not in regressed]
    lines = _groups_section("Regressed", "", [failing[t] for t in regressed], limit)
    if rest:
        lines += _groups_section("Failing, not regressed", "failed in the baseline too, or "
                                 "outside its selection", rest, limit)
    return lines


def _groups_section(name: str, note: str, tests: list[Mapping[str, Any]], limit: int
                    ) -> list[str]:
    """``**Name (N):** note``, then one line per op × dtype; those past ``limit`` folded."""
    count = len(tests)
    head = f"**{name} ({count}):**" + (f" {note}" if note else "")
    if not tests:
        return ["", head, "", "none"]
    groups = comment_groups(tests)
    lines = ["", head, "", f"{count} test(s) in {len(groups)} group(s) of op × dtype:", ""]
    lines += [_group_line(group) for group in groups[:limit]]
    folded = groups[limit:]
    if folded:
        lines += ["", "<details><summary>"
                  f"{len(folded)} more group(s), {sum(g.count for g in folded)} test(s)"
                  "</summary>", ""]
        lines += [_group_line(group) for group in folded]
        lines += ["", "</details>"]
    return lines


def _group_line(group: FailureGroup) -> str:
    statuses = ", ".join(f"{status} {n}" for status, n in group.statuses.items())
    op = _code(group.op) + (f" {_code(group.dtype)}" if group.dtype else "")
    worst = worst_words(group.worst)
    said = "; ".join(part for part in (f"{group.count} test(s) ({statuses})", worst) if part)
    example = group.worst["id"]
    # A test of no op (a model) is its own group: its id is already said.
    return f"- {op}: {said}" + ("" if example == group.op else f"; e.g. {_code(example)}")


def capped(lines: list[str], max_chars: int) -> list[str]:
    """``lines`` whole while they fit in ``max_chars``; else the first that fit, any open
    ``<details>`` closed, and a last line saying how many were cut."""
    if sum(len(line) + 1 for line in lines) <= max_chars:
        return lines
    room = max_chars - 200  # the closing tag and the line that says what was cut
    kept: list[str] = []
    for line in lines:
        if room < len(line) + 1:
            break
        kept.append(line)
        room -= len(line) + 1
    open_details = sum(1 for line in kept if line.startswith("<details>")) - kept.count(
        "</details>")
    cut = len(lines) - len(kept)
    return [*kept, *(["", "</details>"] * open_details), "",
            f"*{cut} line(s) cut to stay under GitHub's comment limit: `ckit show` lists "
            "every failure.*"]
