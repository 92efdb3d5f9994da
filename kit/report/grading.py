"""Grading: the best of the standard's grades whose conditions the run meets.

``reasons`` tells a release manager, in plain words, what kept the run from each better grade;
a condition shared by several better grades is said once, naming all of them.

Every fact is one the report records (its records, missing ids, policy violations and the
environment's torch version), so a report read from disk can be graded again the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kit.errors import InputError
from kit.results import Status, TestRecord
from kit.standard import Grade, Standard

#: How many test ids or violations a reason names before it says "and N more".
LISTED = 10

#: Status word used in reasons for a required test that has no record at all.
MISSING = "MISSING"


@dataclass(frozen=True)
class Evidence:
    """The facts every grade condition is judged on."""

    passed: int
    ran: int
    #: Required test ids that did not pass, with their status (or ``MISSING``), sorted by id.
    required_not_passed: tuple[tuple[str, str], ...]
    violations: tuple[Mapping[str, str], ...]
    #: ``torch.__version__`` as the report's environment recorded it, e.g. ``2.13.0+cpu``.
    torch_version: str

    @property
    def pass_rate(self) -> float:
        return self.passed / self.ran if self.ran else 0.0


def collect_evidence(
    standard: Standard,
    records: Sequence[TestRecord],
    missing: Sequence[str],
    violations: Sequence[Mapping[str, str]],
    environment: Mapping[str, Any],
) -> Evidence:
    """The facts to grade on; ``environment`` is the report's environment section."""
    ran = [r for r in records if r.status not in (Status.SKIPPED, Status.NOT_APPLICABLE)]
    not_passed = [
        (r.id, r.status.value)
        for r in records
        if r.status is not Status.PASS and standard.is_required(r.id)
    ]
    not_passed += [(test_id, MISSING) for test_id in missing if standard.is_required(test_id)]
    return Evidence(
        passed=sum(1 for r in ran if r.status is Status.PASS),
        ran=len(ran),
        required_not_passed=tuple(sorted(not_passed)),
        violations=tuple(violations),
        torch_version=recorded_torch_version(environment),
    )


def recorded_torch_version(environment: Mapping[str, Any]) -> str:
    torch = environment.get("torch")
    version = torch.get("version") if isinstance(torch, Mapping) else None
    if not isinstance(version, str) or not version:
        raise InputError("the report's environment records no torch version to grade it on")
    return version


# A failed condition: a key shared by the grades it keeps out of reach, and the words for it
# given those grades.
Words = Callable[[list[Grade]], str]
Shortfall = tuple[tuple[Any, ...], Words]


def shortfalls(standard: Standard, grade: Grade, evidence: Evidence) -> list[Shortfall]:
    found: list[Shortfall] = []
    # First: when it fails, nothing else about the run matters for certification.
    if grade.certified_torch_release and not standard.certifies(evidence.torch_version):
        found.append((("torch",), _torch_words(standard, evidence)))
    if evidence.pass_rate < grade.min_pass_rate:
        found.append((("pass_rate",), _pass_rate_words(evidence)))
    if grade.all_required_passed and evidence.required_not_passed:
        found.append((("required",), _required_words(evidence)))
    limit = grade.max_policy_violations
    if limit != -1 and len(evidence.violations) > limit:
        found.append((("violations", limit), _violation_words(limit, evidence)))
    return found


def grade_run(standard: Standard, evidence: Evidence) -> dict[str, Any]:
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
        "max_policy_violations -1, certified_torch_release false)"
    )


def _reasons(missed: list[tuple[Grade, list[Shortfall]]]) -> list[str]:
    grades_by_key: dict[tuple[Any, ...], list[Grade]] = {}
    words_by_key: dict[tuple[Any, ...], Words] = {}
    for grade, found in missed:
        for key, words in found:
            grades_by_key.setdefault(key, []).append(grade)
            words_by_key.setdefault(key, words)
    return [words_by_key[key](grades) for key, grades in grades_by_key.items()]


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _needs(grades: list[Grade], singular: str, plural: str) -> str:
    """``conformant needs`` / ``conformant and conformant-with-exceptions need``."""
    return f"{_and([g.name for g in grades])} {singular if len(grades) == 1 else plural}"


def _needed_rates(grades: list[Grade]) -> str:
    """``conformant needs at least 100%`` / ``... at least 100%, conformant-with-... 95%``."""
    rates = [f"{g.name} {'needs at least ' if i == 0 else ''}{g.min_pass_rate * 100:g}%"
             for i, g in enumerate(grades)]
    return ", ".join(rates)


def percent(rate: float) -> str:
    # Round down so 99.996% never reads as the 100% it falls short of.
    return f"{math.floor(rate * 10000) / 100:.2f}%"


def _pass_rate_words(evidence: Evidence) -> Words:
    if evidence.ran == 0:
        return lambda grades: (
            "no test ran (every test was skipped or not applicable), so there is no pass rate; "
            f"{_needed_rates(grades)}"
        )
    failed = evidence.ran - evidence.passed
    return lambda grades: (
        f"pass rate is {percent(evidence.pass_rate)} ({evidence.passed} of {evidence.ran} tests "
        f"that ran passed, {failed} did not); {_needed_rates(grades)}: "
        "fix the failing tests or list known gaps in the skip manifest"
    )


def _torch_words(standard: Standard, evidence: Evidence) -> Words:
    release = standard.torch_release
    return lambda grades: (
        f"ran torch {evidence.torch_version}; standard {standard.version} certifies {release}: "
        f"{_needs(grades, 'needs', 'need')} a run on torch {release} (any local build, such as "
        f"{release}+cpu); install torch {release} and rerun"
    )


def _required_words(evidence: Evidence) -> Words:
    items = [f"{test_id} ({status})" for test_id, status in evidence.required_not_passed]
    listed = _listed(items)
    count = len(items)
    noun = "test" if count == 1 else "tests"
    return lambda grades: (
        f"{count} required {noun} did not pass: {listed}; {_needs(grades, 'needs', 'need')} every "
        "required test to run and pass (a skipped, not applicable or missing one does not count)"
    )


def _violation_words(limit: int, evidence: Evidence) -> Words:
    listed = _listed([v["message"] for v in evidence.violations], separator="; ")
    count = len(evidence.violations)
    noun = "violation" if count == 1 else "violations"
    return lambda grades: (
        f"{count} skip-policy {noun} ({_needs(grades, 'allows', 'allow')} at most {limit}): "
        f"{listed}"
    )


def _listed(items: Sequence[str], separator: str = ", ") -> str:
    shown = separator.join(items[:LISTED])
    rest = len(items) - LISTED
    return f"{shown}{separator}... and {rest} more" if rest > 0 else shown
