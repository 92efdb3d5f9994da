"""Grading a report again from its records and its standard, the way the run graded it.

The grade a report claims, its summary counts and its policy violations are all derived from
facts the report records (records, missing ids, the skip manifest's entries, the run's tiers,
--select and date, the environment's torch version) and from the standard. Derived again here,
they must agree with the claims; and the standard's locked test lists must be covered, so that a
failing test cannot vanish from both the records and the missing list.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kit.errors import KitError
from kit.grading.blame import check_suspects
from kit.grading.build import missing_ids
from kit.grading.evidence import report_evidence
from kit.grading.grading import grade_run
from kit.grading.policy import is_complete_run, policy_violations
from kit.report.model import Report, ReportError
from kit.report.summary import summarize
from kit.standard import Standard

#: What identifies a policy violation; its message wording may change between kit versions.
_VIOLATION_KEYS = ("kind", "test", "entry")


def check_coverage(report: Report, standard: Standard) -> None:
    """Every test the standard expects of this run has a record or is listed as missing."""
    recorded = report.recorded_ids
    both = next((test_id for test_id in report.missing if test_id in recorded), None)
    if both is not None:
        raise ReportError(f"{both!r} is listed as missing but has a record")
    listed = set(report.missing)
    expected = missing_ids(standard, report.run.scope(), recorded)
    absent = next((test_id for test_id in expected if test_id not in listed), None)
    if absent is not None:
        raise ReportError(
            f"standard {standard.version} expects test {absent!r} of this run, but the report "
            "neither records it nor lists it as missing"
        )


def check_completeness(report: Report, standard: Standard) -> None:
    """A run whose records leave out tests of the standard may not call itself complete (nor
    the reverse)."""
    run = report.run
    actual = is_complete_run(standard, report.run.scope(), report.recorded_ids)
    if run.complete != actual:
        raise ReportError(
            f"run says complete={str(run.complete).lower()}, but its records "
            f"({len(report.read_records)}) make it complete={str(actual).lower()} under standard "
            f"{standard.version}"
        )


def recomputed_violations(report: Report, standard: Standard) -> list[dict[str, str]]:
    records = list(report.read_records)
    return policy_violations(records, standard, report.skips, report.run.scope(),
                             report.run.today)


def _identity(violation: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(violation.get(key, "") for key in _VIOLATION_KEYS)


def check_violations(report: Report, recomputed: Sequence[Mapping[str, str]]) -> None:
    claimed = [_identity(v) for v in report.violations]
    actual = [_identity(v) for v in recomputed]
    if claimed == actual:
        return
    index = next(
        (i for i, (a, b) in enumerate(zip(claimed, actual, strict=False)) if a != b),
        min(len(claimed), len(actual)),
    )
    said = "/".join(filter(None, claimed[index])) if index < len(claimed) else "nothing"
    found = "/".join(filter(None, actual[index])) if index < len(actual) else "nothing"
    raise ReportError(
        f"policy violations differ from those its records, skip manifest and standard give "
        f"(report lists {len(claimed)}, recomputed {len(actual)}; at #{index + 1} the report "
        f"says {said!r}, recomputed {found!r})"
    )


def _first_mismatch(claimed: Any, actual: Any, where: str) -> str | None:
    """The path of the first value that differs, walking the (shallow) summary structure."""
    if isinstance(claimed, Mapping) and isinstance(actual, Mapping):
        for key in sorted(claimed.keys() | actual.keys()):
            found = _first_mismatch(claimed.get(key), actual.get(key), f"{where}.{key}")
            if found is not None:
                return found
        return None
    # The schema fixes the types here (counts are integers, a rate a number or null).
    if claimed == actual:
        return None
    return f"{where}: report says {_shown(claimed)}, records give {_shown(actual)}"


def _shown(value: Any) -> str:
    return json.dumps(value, sort_keys=True)[:40]


def check_summary(report: Report, standard: Standard) -> None:
    actual = summarize(list(report.read_records), list(report.missing), report.run.tiers,
                       standard.statuses, report.tier_status_counts, report.gathered_dispatches)
    # Compared in their JSON form, so a mismatch is named by its path in report.json.
    mismatch = _first_mismatch(report.summary.to_json(), actual.to_json(), "summary")
    if mismatch is not None:
        raise ReportError(f"summary does not match the records ({mismatch})")


def recomputed_grade(report: Report, standard: Standard) -> str:
    """The grade the run's own grading gives this report (its violations already checked)."""
    try:
        return str(grade_run(standard, report_evidence(standard, report))["name"])
    except KitError as exc:
        raise ReportError(f"cannot grade the report again: {exc}") from None


def check_grade(report: Report, standard: Standard) -> None:
    """Coverage, completeness, violations, summary, blame's suspects (``kit.grading.blame``),
    then the grade itself must all agree."""
    check_coverage(report, standard)
    check_completeness(report, standard)
    violations = recomputed_violations(report, standard)
    check_violations(report, violations)
    check_summary(report, standard)
    problem = check_suspects(report.read_records)
    if problem is not None:
        raise ReportError(problem)
    actual = recomputed_grade(report, standard)
    if actual != report.grade.name:
        raise ReportError(
            f"report claims grade {report.grade.name!r}, but its records graded under standard "
            f"{standard.version} give {actual!r}"
        )
