"""The plain words of each grade reason, for a release manager.

Each ``*_words`` function takes the evidence and returns a function of the grades the condition
keeps out of reach, so a condition shared by several grades is said once, naming all of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from kit.clock import OVERRIDE_ENV
from kit.grading.evidence import Evidence
from kit.standard import Grade, Standard

#: How many test ids or violations a reason names before it says "and N more".
LISTED = 10

Words = Callable[[list[Grade]], str]


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _needs(grades: list[Grade], singular: str, plural: str) -> str:
    """``conformant needs`` / ``conformant and conformant-with-exceptions need``."""
    return f"{_and([g.name for g in grades])} {singular if len(grades) == 1 else plural}"


def _per_grade(grades: list[Grade], lead: str, value: Callable[[Grade], str]) -> str:
    """``conformant needs at least 100%, conformant-with-exceptions 95%``."""
    return ", ".join(f"{g.name} {lead if i == 0 else ''}{value(g)}" for i, g in enumerate(grades))


def percent(rate: float) -> str:
    # Round down so 99.996% never reads as the 100% it falls short of.
    return f"{math.floor(rate * 10000) / 100:.2f}%"


def percent_up(rate: float) -> str:
    # Round up so a share just over a limit never reads as the limit itself.
    return f"{math.ceil(rate * 10000) / 100:.2f}%"


def _listed(items: Sequence[str], separator: str = ", ") -> str:
    shown = separator.join(items[:LISTED])
    rest = len(items) - LISTED
    return f"{shown}{separator}... and {rest} more" if rest > 0 else shown


def _tests(count: int) -> str:
    return f"{count} test" if count == 1 else f"{count} tests"


def torch_words(standard: Standard, evidence: Evidence) -> Words:
    release = standard.torch_release
    if evidence.canary:
        # Its torch is the point of a canary: what to do next is the release's own standard.
        return lambda grades: (
            f"a canary: ran torch {evidence.torch_version} under standard {standard.version}, "
            f"which certifies {release}; {_needs(grades, 'needs', 'need')} a run on torch "
            f"{release}, or, for this release, its own standard (`ckit standard new`)"
        )
    return lambda grades: (
        f"ran torch {evidence.torch_version}; standard {standard.version} certifies {release}: "
        f"{_needs(grades, 'needs', 'need')} a run on torch {release} (any local build, such as "
        f"{release}+cpu); install torch {release} and rerun"
    )


def clock_words(evidence: Evidence) -> Words:
    clock = evidence.clock
    return lambda grades: (
        f"the run's date was set by {OVERRIDE_ENV} to {clock.today} while the system clock said "
        f"{clock.clock_today}, and the date decides which skip-manifest entries have expired: "
        f"{_needs(grades, 'needs', 'need')} a run on the system clock's date; rerun without "
        f"{OVERRIDE_ENV}"
    )


def _needed_rates(grades: list[Grade]) -> str:
    return _per_grade(grades, "needs at least ", lambda g: f"{g.min_pass_rate * 100:g}%")


def pass_rate_words(evidence: Evidence) -> Words:
    if evidence.counted == 0:
        return lambda grades: (
            "no test ran (every test was skipped or not applicable), so there is no pass rate; "
            f"{_needed_rates(grades)}"
        )
    failed = evidence.counted - evidence.passed
    if evidence.unaccounted:
        basis = (f"{evidence.passed} of {evidence.counted} tests passed, {failed} did not, "
                 f"counting {_tests(len(evidence.unaccounted))} not accounted for as failures")
    else:
        basis = f"{evidence.passed} of {evidence.ran} tests that ran passed, {failed} did not"
    return lambda grades: (
        f"pass rate is {percent(evidence.pass_rate)} ({basis}); {_needed_rates(grades)}: "
        "fix the failing tests or list known gaps in the skip manifest"
    )


def unaccounted_words(evidence: Evidence) -> Words:
    ids_by_why: dict[str, list[str]] = {}
    for unaccounted in evidence.unaccounted:
        ids_by_why.setdefault(unaccounted.why, []).append(unaccounted.test_id)
    groups = "; ".join(f"{why} ({len(ids)}): {_listed(ids)}" for why, ids in ids_by_why.items())
    return lambda grades: (
        f"{_tests(len(evidence.unaccounted))} of the standard not accounted for, counted as "
        f"failures: {groups}; {_needs(grades, 'needs', 'need')} every test to have a record, "
        "to be not applicable only for a reason the kit gives, and to be skipped only by a "
        "skip-manifest entry"
    )


def required_words(evidence: Evidence) -> Words:
    items = [f"{test_id} ({status})" for test_id, status in evidence.required_not_passed]
    listed = _listed(items)
    count = len(items)
    noun = "test" if count == 1 else "tests"
    return lambda grades: (
        f"{count} required {noun} did not pass: {listed}; {_needs(grades, 'needs', 'need')} every "
        "required test to run and pass (a skipped, not applicable or missing one does not count)"
    )


def skipped_share_words(evidence: Evidence) -> Words:
    def words(grades: list[Grade]) -> str:
        over = evidence.tiers_skipping_over(min(g.max_skipped_share for g in grades))
        tiers = [f"{t.tier} {t.skipped} of {t.total} tests ({percent_up(t.share)})" for t in over]
        allowed = _per_grade(
            grades, "allows at most ", lambda g: f"{g.max_skipped_share * 100:g}%"
        )
        return (
            f"the skip manifest skipped too much: {', '.join(tiers)}; {allowed} of each tier: "
            "fix the skipped tests and remove their entries"
        )

    return words


def violation_words(limit: int, evidence: Evidence) -> Words:
    listed = _listed([v["message"] for v in evidence.violations], separator="; ")
    count = len(evidence.violations)
    noun = "violation" if count == 1 else "violations"
    return lambda grades: (
        f"{count} skip-policy {noun} ({_needs(grades, 'allows', 'allow')} at most {limit}): "
        f"{listed}"
    )
