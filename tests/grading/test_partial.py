"""A narrowed run is ``partial``: its grade is never conformant, and the grade its own tests
earn decides whether ``ckit run`` exits with the partial code or with its grade's own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from report_helpers import REQUIRED, REQUIRED_NEVER_SKIP, passing, run_info

from kit.grading.partial import partial_of
from kit.results import Status, TestRecord
from kit.standard import Standard

Make = Callable[..., dict[str, Any]]
NARROWED = {"select": ["unit/opinfo/*/float32/0"], "tiers": ["unit"]}


def test_narrowed_run_whose_tests_all_pass_is_partial_not_non_conformant(
    make_report: Make, standard: Standard
) -> None:
    report = make_report(passing(REQUIRED_NEVER_SKIP, REQUIRED),
                         run=run_info(complete=False, **NARROWED))
    partial = partial_of(standard, report)
    assert partial is not None and partial.only_narrowed
    assert (partial.grade, partial.earned) == ("non-conformant", "conformant")
    assert partial.words() == ("non-conformant (partial: the tests it ran meet conformant; only "
                               "a complete run is graded conformant)")


def test_narrowed_run_with_a_failing_required_test_stays_non_conformant(
    make_report: Make, standard: Standard
) -> None:
    failing = TestRecord(REQUIRED, Status.FAIL_NUMERIC, 0.5, "1/4 elements differ")
    report = make_report([*passing(REQUIRED_NEVER_SKIP), failing],
                         run=run_info(complete=False, **NARROWED))
    partial = partial_of(standard, report)
    assert partial is not None and not partial.only_narrowed
    assert partial.earned == "non-conformant"


def test_complete_run_has_no_qualifier(make_report: Make, standard: Standard) -> None:
    report = make_report(passing(REQUIRED_NEVER_SKIP, REQUIRED))
    assert report["grade"]["name"] == "conformant"
    assert partial_of(standard, report) is None
