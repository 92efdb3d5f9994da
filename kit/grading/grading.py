"""Grading: the best of the standard's grades whose conditions the run meets.

``reasons`` tells a release manager, in plain words (``kit.grading.grade_words``), what kept the
run from each better grade; a condition shared by several better grades is said once, naming all
of them.

Every fact comes from the report itself (``kit.grading.evidence``), so ``grade_report`` on a
report read from disk gives the grade the report carries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from kit.errors import InputError
from kit.grading import grade_words
from kit.grading.evidence import Evidence, collect_evidence
from kit.grading.grade_words import Words
from kit.results import TestRecord
from kit.standard import Grade, Standard

# A failed condition: a key shared by the grades it keeps out of reach, and the words for it
# given those grades.
Shortfall = tuple[tuple[Any, ...], Words]


def shortfalls(standard: Standard, grade: Grade, evidence: Evidence) -> list[Shortfall]:
    found: list[Shortfall] = []
    # First: when these fail, nothing else about the run matters for certification.
    if grade.certified_torch_release and not standard.certifies(evidence.torch_version):
        found.append((("torch",), grade_words.torch_words(standard, evidence)))
    if grade.real_clock and evidence.clock.overridden:
        found.append((("clock",), grade_words.clock_words(evidence)))
    if evidence.pass_rate < grade.min_pass_rate:
        found.append((("pass_rate",), grade_words.pass_rate_words(evidence)))
        if evidence.unaccounted:
            found.append((("unaccounted",), grade_words.unaccounted_words(evidence)))
    if grade.all_required_passed and evidence.required_not_passed:
        found.append((("required",), grade_words.required_words(evidence)))
    if evidence.tiers_skipping_over(grade.max_skipped_share):
        found.append((("skipped_share",), grade_words.skipped_share_words(evidence)))
    limit = grade.max_policy_violations
    if limit != -1 and len(evidence.violations) > limit:
        found.append((("violations", limit), grade_words.violation_words(limit, evidence)))
    return found


class GradeJson(TypedDict):
    """report.json's ``grade``."""

    name: str
    #: Why each better grade was missed, the best first.
    reasons: list[str]


def grade_report(standard: Standard, report: Mapping[str, Any],
                 records: Sequence[TestRecord] | None = None) -> GradeJson:
    """The grade of a built report (its ``grade`` field itself is not read); ``records``: its
    records already typed, if the caller has them."""
    return grade_run(standard, collect_evidence(standard, report, records))


def grade_run(standard: Standard, evidence: Evidence) -> GradeJson:
    """``{"name": best grade met, "reasons": [why each better grade was missed]}``."""
    missed: list[tuple[Grade, list[Shortfall]]] = []
    for grade in standard.grades:
        found = shortfalls(standard, grade, evidence)
        if not found:
            return {"name": grade.name, "reasons": _reasons(missed)}
        missed.append((grade, found))
    raise InputError(
        f"standard {standard.version}: no grade accepts this run; "
        "its last grade must accept every run (min_pass_rate 0, all_required_passed false, "
        "max_policy_violations -1, max_skipped_share 1, certified_torch_release false, "
        "real_clock false)"
    )


def _reasons(missed: list[tuple[Grade, list[Shortfall]]]) -> list[str]:
    grades_by_key: dict[tuple[Any, ...], list[Grade]] = {}
    words_by_key: dict[tuple[Any, ...], Words] = {}
    for grade, found in missed:
        for key, words in found:
            grades_by_key.setdefault(key, []).append(grade)
            words_by_key.setdefault(key, words)
    return [words_by_key[key](grades) for key, grades in grades_by_key.items()]
