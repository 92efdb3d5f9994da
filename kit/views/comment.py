"""A run as a short markdown comment for a pull request (``ckit show --format comment``).

What a reviewer of an upstream PyTorch change needs at a glance: the grade and the torch it ran
on (a canary says it is no certificate), counts per tier, then, against a baseline run (the
vendor's last certified one), the tests that regressed first. Every line is printable and no
report text can close the markdown: ids and statuses go inside code spans with backticks
removed.
"""

from __future__ import annotations

from kit.grading.grade_words import percent
from kit.printable import printable
from kit.report.attribution_summary import REPORTED_BY, AttributionTotals
from kit.report.read import LoadedReport
from kit.report.release_drift import drift_words
from kit.views.diff import CATEGORIES, diff_reports
from kit.views.show import ShowView


def _code(text: str) -> str:
    return "`" + printable(text).replace("`", "'") + "`"


def comment_lines(view: ShowView, baseline: LoadedReport | None, limit: int) -> list[str]:
    report = view.report
    environment = report.environment.get("torch", {})
    torch_version = environment.get("version", "?") if isinstance(environment, dict) else "?"
    canary = report.run.canary
    kind = "canary run (not a certificate)" if canary else "run"
    lines = [
        f"### ckit {kind}: {_code(report.vendor_id)} on torch {_code(str(torch_version))}",
        "",
        f"Grade **{_code(report.grade.name)}** under standard {_code(report.standard.version)} "
        f"(kit {_code(report.kit.version)}).",
        "",
        "| tier | tests | passed | not passed |",
        "|---|---:|---:|---:|",
    ]
    for row in view.tiers:
        passed = row.statuses.get("PASS", 0)
        lines.append(f"| {row.tier} | {row.total} | {passed} | {row.total - passed} |")
    lines += _attribution(report.attribution)
    if view.drift:
        lines += ["", f"Release: {drift_words(view.drift, report.standard.version)}."]
        lines += [f"- inputs changed: {_code(test_id)}"
                  for test_id in view.drift.inputs_changed[:limit]]
    if baseline is not None:
        lines += ["", *_against(view.source, baseline, limit)]
    return lines


def _attribution(totals: AttributionTotals | None) -> list[str]:
    """The native rate, said to be the vendor's word (``kit.attribution``)."""
    if totals is None:
        return []
    rate = "—" if totals.native_rate is None else percent(totals.native_rate)
    return ["", f"Attribution, as {REPORTED_BY}: {rate} of the device ops of {totals.tests} "
                f"test(s) ran natively; {totals.tests_with_fallback} test(s) used the backend's "
                "fallback."]


def _against(source: LoadedReport, baseline: LoadedReport, limit: int) -> list[str]:
    diff = diff_reports(baseline, source, allow_other_standard=True)
    counts = ", ".join(f"{len(diff.changes[name])} {name}" for name in CATEGORIES)
    lines = [f"Against {_code(baseline.report.vendor_id)}'s run of standard "
             f"{_code(baseline.report.standard.version)} ({_code(baseline.sha256[:12])}): "
             f"{counts}."]
    regressed = diff.changes["regressed"]
    if regressed:
        lines += ["", f"**Regressed ({len(regressed)}):**", ""]
        lines += [f"- {_code(c.test_id)}: {_code(c.before.text())} → {_code(c.after.text())}"
                  for c in regressed[:limit]]
        if len(regressed) > limit:
            lines.append(f"- ... and {len(regressed) - limit} more (`ckit diff`)")
    return lines
