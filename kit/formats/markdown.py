"""summary.md: the GitHub job summary a release manager reads first.

Everything from the vendor's stack (messages, reasons) is escaped, so a message cannot break a
table, inject links or HTML, or blow the summary size limit.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kit.attribution.dispatch import Where
from kit.flows.interface import Stage
from kit.formats import view
from kit.formats.core_aten_md import core_aten_section
from kit.formats.interface import ReportFormat
from kit.grading.certified import packages_text, where_it_ran
from kit.grading.grade_words import percent
from kit.grading.wording import RunWording, document_wording
from kit.report.attribution_summary import says_who_reported
from kit.report.op_dtype import FailureGroup, group_failures
from kit.report.summary import Counts, summary_of
from kit.report.training_summary import passed_words, training_steps
from kit.results import Status
from kit.rundir import REPORT_JSON, RESULTS_CSV, SUMMARY_MD
from kit.standard import load_standard
from kit.tiers.distributed.transport import collective_transports

#: Rows of the failing-tests table before "... and N more".
MAX_FAILING_ROWS = 200
#: Rows of the other lists (skip entries, not-applicable reasons, missing tests).
MAX_LIST_ROWS = 50
#: Characters of one message shown in a table cell.
MAX_CELL = 300

#: Runs finished since then are worded by ``kit.grading.wording`` (a narrowed run is partial in
#: the title and the grade section; its stale entries match no test of the standard, as
#: ``kit.grading.stale`` decides them since); an earlier report's summary.md keeps the words its kit
#: signed, so ``ckit verify`` still renders it byte for byte.
RUN_WORDING_SINCE = dt.datetime(2026, 11, 29, 10, 0, tzinfo=dt.UTC)

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|~&])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACE = re.compile(r"\s+")


def text(value: Any, limit: int = MAX_CELL) -> str:
    """``value`` as inert Markdown on one line, cut to ``limit`` characters."""
    visible = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))
    flat = _SPACE.sub(" ", visible).strip()
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return _SPECIAL.sub(r"\\\1", flat)


def code(value: str) -> str:
    if "`" in value or not value.isprintable():
        return text(value)
    return "`" + value.replace("|", "\\|") + "`"


_PLAIN_URL = re.compile(r"https?://[^\s<>()\[\]|`\\]+\Z")


def link(url: str) -> str:
    """A clickable autolink for a plain http(s) URL; anything else as inert text."""
    return f"<{url}>" if _PLAIN_URL.match(url) else text(url)


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return lines


def _capped(
    rows: list[list[str]], limit: int, what: str, where: str = REPORT_JSON
) -> tuple[list[list[str]], list[str]]:
    if len(rows) <= limit:
        return rows, []
    return rows[:limit], ["", f"... and {len(rows) - limit} more {what} (see {where})"]


def _rate(counts: Counts) -> str:
    rate = counts.pass_rate
    return "—" if rate is None else percent(rate)


def grade_mark(report: Mapping[str, Any]) -> str:
    """The mark the report's standard gives its grade."""
    standard = load_standard(report["standard"]["version"])
    return standard.grade(view.grade_name(report)).mark


def worded(report: Mapping[str, Any]) -> bool:
    """Whether the run finished since ``RUN_WORDING_SINCE``."""
    return dt.datetime.fromisoformat(report["run"]["finished_at"]) >= RUN_WORDING_SINCE


def run_wording_of(report: Mapping[str, Any]) -> RunWording | None:
    """The run's shared wording, for a report finished since ``RUN_WORDING_SINCE``; None for an
    earlier one, whose summary says its grade as its kit signed it."""
    return document_wording(report) if worded(report) else None


def vendor_title(vendor: Mapping[str, Any]) -> str:
    """The vendor as the title names it: its id, which is all a kit since 2026-11-29 writes as
    the display name (who it is comes only from the root-signed keyring); an older report's
    display name kept as its summary always showed it, so that summary still regenerates."""
    if vendor["display_name"] == vendor["id"]:
        return code(vendor["id"])
    return f"{text(vendor['display_name'])} ({code(vendor['id'])})"


def heading(report: Mapping[str, Any]) -> list[str]:
    vendor, kit, standard = report["vendor"], report["kit"], report["standard"]
    wording = run_wording_of(report)
    grade = view.grade_name(report) if wording is None else wording.short()
    mark = grade_mark(report) if wording is None else wording.mark
    env = report["environment"]
    device = env["device"]
    container = env["container"]
    inside = f" · container {code(container['image'])}" if container else ""
    return [
        f"# {mark} {vendor_title(vendor)}: {grade}",
        "",
        f"Kit {text(kit['version'])} · standard {text(standard['version'])} · "
        f"PyTorch {text(standard['torch_release'])} (ran {text(env['torch']['version'])}) · "
        f"device {text(device['type'])} × {device['count']} ({text(device['name'])}){inside} · "
        f"kit digest {code(kit['digest'])}",
        *certified_lines(report),
        *release_note(report),
        *clock_note(report),
    ]


def certified_lines(report: Mapping[str, Any]) -> list[str]:
    """What was certified: the claimed dtypes and flows, where it ran, the vendor's packages."""
    vendor, env = report["vendor"], report["environment"]
    claims = (
        f"Claimed dtypes {text(', '.join(vendor['dtypes']))} · flows "
        f"{text(', '.join(vendor['flows']))} · ran on {text(where_it_ran(env))}"
    )
    packages = packages_text(env)
    return ["", claims] + ([f"Vendor packages: {text(packages)}"] if packages else [])


def release_note(report: Mapping[str, Any]) -> list[str]:
    """Said plainly when the kit is not a released one; nothing when it is."""
    if view.kit_released(report):
        return []
    return [
        "",
        f"⚠️ **This kit is not a released kit** (digest {code(report['kit']['digest'])}): "
        "results are not comparable with released-kit results.",
    ]


def clock_note(report: Mapping[str, Any]) -> list[str]:
    """Said plainly when the run's date was not the system clock's."""
    run = report["run"]
    if not run["clock_override"]:
        return []
    return [
        "",
        f"⛔ **The run's date was overridden**: skip expiry was judged on {text(run['today'])}, "
        f"not on the system clock's {text(run['clock_today'])}; this report is not certifiable.",
    ]


def counts_table(report: Mapping[str, Any]) -> list[str]:
    summary = summary_of(report)
    # The statuses the report's standard declares: its summary has a key for each.
    statuses = [s.value for s in Status if s.value in summary.overall.statuses]
    header = ["tier", *statuses, "missing", "total", "pass rate"]
    rows = [
        [name, *(str(c.statuses[s]) for s in statuses), str(c.missing), str(c.total),
         _rate(c)]
        for name, c in [*summary.tiers_in_order(), ("**all**", summary.overall)]
    ]
    return ["## Results", "", *table(header, rows)]


#: The stages of a flow record, in pipeline order, as the flows table's columns.
FLOW_STAGES = tuple(stage.value for stage in Stage if stage is not Stage.RAN)


def flows_table(report: Mapping[str, Any]) -> list[str]:
    """Per flow: records per stage, ops the backend took or left, lowering cost."""
    flows = summary_of(report).flows
    if not flows:
        return []
    header = ["flow", *FLOW_STAGES, "delegated ops", "undelegated ops", "most left out",
              "lowering s", "program bytes"]
    rows = [
        [text(flow), *(str(totals.stages.get(stage, 0)) for stage in FLOW_STAGES),
         str(totals.delegated_ops), str(totals.undelegated_ops),
         text(", ".join(f"{op} ({n})" for op, n in totals.top_undelegated[:3])),
         f"{totals.lowering_s:.1f}", str(totals.program_bytes)]
        for flow, totals in flows.items()
    ]
    return ["## Flows", "", *table(header, rows)]


def attribution_section(report: Mapping[str, Any]) -> list[str]:
    """Where the device calls ran their ops, then where the collectives ran: a distributed test
    whose backend ran them on host copies is not native (``details.transport``)."""
    lines = _ops_lines(report)
    transports = collective_transports(record["details"] for record in view.records(report))
    if transports is None:
        return lines
    return [*(lines or ["## What ran on the device"]), "", transports.sentence()]


def _ops_lines(report: Mapping[str, Any]) -> list[str]:
    """The native rate, then each op that went through the backend's fallback, by tests
    (``summary.attribution``)."""
    totals = summary_of(report).attribution
    if totals is None:
        return []
    rate = totals.native_rate
    shown_rate = "—" if rate is None else percent(rate)
    who = ("As reported by the vendor's process, not measured by the kit: "
           if says_who_reported(report["run"]["finished_at"]) else "")
    lines = [
        "## What ran on the device",
        "",
        f"{who}{shown_rate} of the device ops of {totals.tests} test(s) ran natively (a "
        f"kernel of the device's own, not the backend's fallback); "
        f"{totals.tests_with_fallback} test(s) used the fallback.",
    ]
    rows = [[code(op), str(tests), str(totals.ops[op][Where.NATIVE.value])]
            for op, tests in totals.fallback_ops()]
    if not rows:
        return lines
    shown, more = _capped(rows, MAX_LIST_ROWS, "ops")
    return [*lines, "", *table(["op through the fallback", "tests", "native in"], shown), *more]


def grade_section(report: Mapping[str, Any]) -> list[str]:
    reasons = report["grade"]["reasons"]
    if not reasons:
        return ["## Grade", "", f"**{view.grade_name(report)}**: every condition is met."]
    wording = run_wording_of(report)
    said = [] if wording is None or wording.partial is None else [
        f"Graded {text(wording.words(), limit=4000)}.", ""]
    lines = ["## Why not a better grade", "", *said]
    return lines + [f"- {text(reason, limit=4000)}" for reason in reasons]


def violations_section(report: Mapping[str, Any]) -> list[str]:
    violations = report["policy"]["violations"]
    if not violations:
        return []
    rows = [[v["kind"], text(v["message"])] for v in violations]
    shown, more = _capped(rows, MAX_LIST_ROWS, "violations")
    return ["## Skip-policy violations", "", *table(["kind", "what"], shown), *more]


def failing_section(report: Mapping[str, Any]) -> list[str]:
    """Failures grouped by op and dtype: counts per status and the worst error of each group."""
    failing = view.failing(report)
    if not failing:
        return []
    rows = [_group_row(group) for group in group_failures(failing)]
    shown, more = _capped(rows, MAX_FAILING_ROWS, "groups", RESULTS_CSV)
    title = f"## Failing tests ({len(failing)}) by op and dtype ({len(rows)} groups)"
    header = ["op", "dtype", "tests", "statuses", "worst error"]
    return [title, "", *table(header, shown), *more]


def _group_row(group: FailureGroup) -> list[str]:
    worst = group.worst
    details = worst.get("details", {})
    keys = [key for key in ("max_rel_err", "max_abs_err") if key in details]
    # Exact, not rounded as the human views round (kit.report.figures): summary.md of a
    # report.json-format report is a signed file that verify renders again and compares byte for
    # byte, so its rendering stays what every earlier kit signed.
    figures = " ".join(f"{key} {text(details[key], 40)}" for key in keys)
    said = " · ".join(part for part in (figures, text(worst["message"])) if part)
    statuses = ", ".join(f"{status} {n}" for status, n in group.statuses.items())
    return [
        code(group.op), group.dtype or "—", str(group.count), statuses,
        f"{code(worst['id'])}: {said}" if said else code(worst["id"]),
    ]


def training_section(report: Mapping[str, Any]) -> list[str]:
    """The model tier's training steps: per model, its status and what went off first."""
    # In text order, as earlier kits signed it (see _group_row): not the views' natural order.
    steps = tuple(sorted(training_steps(report["records"]), key=lambda step: step.test_id))
    if not steps:
        return []
    rows = [[code(step.model), step.status, text(step.first_off) or "—"] for step in steps]
    shown, more = _capped(rows, MAX_LIST_ROWS, "models")
    title = f"## Training steps (model tier): {passed_words(steps)}"
    return [title, "", *table(["model", "status", "off first"], shown), *more]


def skipped_section(report: Mapping[str, Any]) -> list[str]:
    """Skipped tests grouped by the manifest entry that skipped them."""
    groups: dict[str, list[str]] = {}
    for record in view.records(report):
        if record["status"] == Status.SKIPPED.value:
            entry = view.skip_entry(report, record["id"])
            groups.setdefault(entry["test"] if entry else "", []).append(record["id"])
    if not groups:
        return []
    entries = {e["test"]: e for e in report["skip_manifest"]["entries"]}
    rows = [_skip_row(pattern, ids, entries.get(pattern)) for pattern, ids in groups.items()]
    shown, more = _capped(rows, MAX_LIST_ROWS, "skip entries")
    header = ["manifest entry", "tests", "example", "reason", "tracking", "expires"]
    total = sum(len(ids) for ids in groups.values())
    return [f"## Skipped tests ({total})", "", *table(header, shown), *more]


def _skip_row(pattern: str, ids: list[str], entry: Mapping[str, Any] | None) -> list[str]:
    if entry is None:
        return ["(no manifest entry)", str(len(ids)), code(ids[0]), "", "", ""]
    return [
        code(pattern), str(len(ids)), code(ids[0]), text(entry["reason"]),
        link(entry["tracking"]), entry["expires"],
    ]


def not_applicable_section(report: Mapping[str, Any]) -> list[str]:
    reasons: dict[str, int] = {}
    for record in view.records(report):
        if record["status"] == Status.NOT_APPLICABLE.value:
            reason = view.skip_reason(report, record)
            reasons[reason] = reasons.get(reason, 0) + 1
    if not reasons:
        return []
    rows = [[text(reason), str(n)] for reason, n in sorted(reasons.items(), key=lambda i: -i[1])]
    shown, more = _capped(rows, MAX_LIST_ROWS, "reasons")
    return ["## Not applicable", "", *table(["reason", "tests"], shown), *more]


def manifest_section(report: Mapping[str, Any]) -> list[str]:
    stale = report["skip_manifest"]["stale"]
    if not stale:
        return []
    if report["run"].get("complete"):
        what = "this run"
    elif worded(report):  # kit.grading.stale: an entry a narrowed run did not use is not stale
        what = "the standard"
    else:
        what = "this run (the run was narrowed)"
    rows = [[code(e["test"]), text(e["reason"]), link(e["tracking"]), e["expires"]] for e in stale]
    shown, more = _capped(rows, MAX_LIST_ROWS, "stale entries")
    return [
        f"## Stale skip-manifest entries: they match no test of {what}",
        "",
        *table(["entry", "reason", "tracking", "expires"], shown),
        *more,
    ]


def unaccounted_section(report: Mapping[str, Any]) -> list[str]:
    """Missing tests, and not-applicable or skipped ones the grade does not accept."""
    unaccounted = report["unaccounted"]
    if not unaccounted:
        return []
    rows = [[code(u["test"]), u["status"], text(u["why"])] for u in unaccounted]
    shown, more = _capped(rows, MAX_LIST_ROWS, "tests not accounted for")
    title = f"## Tests not accounted for, counted as failures ({len(unaccounted)})"
    return [title, "", *table(["test", "status", "why"], shown), *more]


SECTIONS = (
    heading,
    counts_table,
    flows_table,
    attribution_section,
    core_aten_section,
    grade_section,
    violations_section,
    failing_section,
    training_section,
    unaccounted_section,
    skipped_section,
    not_applicable_section,
    manifest_section,
)


class MarkdownFormat(ReportFormat):
    filename = SUMMARY_MD

    def render(self, report: Mapping[str, Any]) -> bytes:
        blocks = [section(report) for section in SECTIONS]
        lines = [line for block in blocks if block for line in [*block, ""]]
        return "\n".join(lines).encode("utf-8")
