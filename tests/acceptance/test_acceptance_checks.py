"""Each acceptance check, met and not met, on reports the kit's own builder wrote."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from acceptance_helpers import VENDOR, finished_ago, full_report, narrowed_report, read

from kit.acceptance.kit_checks import ReleasedKitCheck, StandardCheck, TorchReleaseCheck
from kit.acceptance.result_checks import (
    MaxAgeCheck,
    MinGradeCheck,
    SkipPolicyCheck,
    VendorCheck,
    grade_order,
)
from kit.errors import InputError
from kit.grading.released import ReleasedKit
from kit.standard import load_standard
from kit.vendors import SkipEntry

NOW = dt.datetime.now(dt.UTC)
RELEASE_DATE = dt.date(2027, 1, 31)


def judged(check: Any, document: dict[str, Any], now: dt.datetime = NOW) -> str | None:
    report, standing = read(document)
    return check.check(report, standing, now)


@pytest.fixture(scope="module")
def narrowed() -> dict[str, Any]:
    return narrowed_report()


def test_released_kit_is_met_by_a_listed_digest_of_the_same_version(narrowed):
    listed = ReleasedKit("0.1.0", narrowed["kit"]["digest"], RELEASE_DATE)
    assert judged(ReleasedKitCheck((listed,)), narrowed) is None


def test_released_kit_is_not_met_by_an_unlisted_digest(narrowed):
    digest = narrowed["kit"]["digest"]
    other = ReleasedKit("0.1.0", "ab" * 32, RELEASE_DATE)
    assert judged(ReleasedKitCheck((other,)), narrowed) == (
        f"kit 0.1.0 with digest {digest[:16]} is not a released kit: its digest is not in "
        "standards/released-kits.yaml"
    )


def test_released_kit_is_not_met_by_a_listed_digest_of_another_version(narrowed):
    digest = narrowed["kit"]["digest"]
    listed = ReleasedKit("0.2.0", digest, RELEASE_DATE)
    assert judged(ReleasedKitCheck((listed,)), narrowed) == (
        f"digest {digest[:16]} is released kit 0.2.0, but the report names kit 0.1.0"
    )


def test_standard_is_met_by_the_reports_standard_and_not_by_another(narrowed):
    version = narrowed["standard"]["version"]
    assert judged(StandardCheck(version), narrowed) is None
    assert judged(StandardCheck("v99"), narrowed) == (
        f"the run was judged against standard {version}, not v99"
    )


def test_torch_release_takes_the_minor_release_or_the_exact_one(narrowed):
    assert judged(TorchReleaseCheck("2.13"), narrowed) is None
    assert judged(TorchReleaseCheck("2.13.0"), narrowed) is None
    assert judged(TorchReleaseCheck("2.1"), narrowed) == (
        f"standard {narrowed['standard']['version']} certifies torch 2.13.0, not 2.1"
    )


def test_torch_release_is_not_met_by_a_run_on_another_torch():
    document = narrowed_report(torch_version="2.12.1+cpu")
    assert document["grade"]["name"] == "not-certifiable"
    assert judged(TorchReleaseCheck("2.13"), document) == "the run ran torch 2.12.1+cpu, not 2.13"


def test_vendor_is_met_by_the_reports_vendor_and_not_by_another(narrowed):
    assert judged(VendorCheck(VENDOR), narrowed) is None
    assert judged(VendorCheck("globex"), narrowed) == "the report is vendor acme's, not globex's"


def test_min_grade_follows_the_standards_order_of_grades(complete_report):
    order = grade_order()
    assert order == tuple(grade.name for grade in load_standard().grades)
    # Unit tests in float16: counted, none required (a distributed float16 test is).
    failing = [r["id"] for r in complete_report["records"]
               if r["id"].startswith("unit/") and "/float16/" in r["id"]][:20]
    with_exceptions = full_report(failing=failing)
    assert with_exceptions["grade"]["name"] == "conformant-with-exceptions"
    at_least = MinGradeCheck("conformant-with-exceptions", order)
    assert judged(at_least, complete_report) is None
    assert judged(at_least, with_exceptions) is None
    assert judged(MinGradeCheck("conformant", order), with_exceptions) == (
        "grade conformant-with-exceptions is below conformant"
    )


def test_min_grade_is_not_met_by_a_non_conformant_run(narrowed):
    at_least = MinGradeCheck("conformant-with-exceptions", grade_order())
    assert judged(at_least, narrowed) == (
        "grade non-conformant is below conformant-with-exceptions"
    )


def test_min_grade_refuses_a_grade_the_standard_does_not_have():
    with pytest.raises(InputError, match="no grade named 'great'; the grades, best first: "
                       "conformant, conformant-with-exceptions, non-conformant"):
        MinGradeCheck("great", grade_order())


def test_max_age_is_met_within_the_days_and_not_after(narrowed):
    finished = dt.datetime.fromisoformat(narrowed["run"]["finished_at"])
    assert judged(MaxAgeCheck(30), narrowed, now=finished + dt.timedelta(days=30)) is None
    later = finished + dt.timedelta(days=31, hours=1)
    assert judged(MaxAgeCheck(30), narrowed, now=later) == (
        f"the run finished on {finished.date()}, 31 days before {later.date()}; "
        "at most 30 days are accepted"
    )


@pytest.mark.parametrize("days", [-1, True, 2.5])
def test_max_age_refuses_what_is_not_a_count_of_days(days):
    with pytest.raises(InputError, match="expected a whole number of days"):
        MaxAgeCheck(days)


def test_skip_policy_is_met_by_a_complete_run_without_skips(complete_report):
    assert complete_report["policy"]["violations"] == []
    assert judged(SkipPolicyCheck(), complete_report) is None


def test_skip_policy_is_not_met_by_a_narrowed_run(narrowed):
    (violation,) = narrowed["policy"]["violations"]
    assert judged(SkipPolicyCheck(), narrowed) == f"1 problem: {violation['message']}"


def entry(test: str, *, reason: str = "precision", tracking: str = "https://example.com/1",
          expires: dt.date | None = None) -> SkipEntry:
    return SkipEntry(test, reason, tracking, expires or dt.date.today() + dt.timedelta(days=30))


def test_skip_policy_is_not_met_by_an_entry_without_reason_or_tracking_link():
    entries = (
        entry("unit/opinfo/sin/float16/*", reason="  "),
        entry("unit/opinfo/cos/float16/*", tracking="see the wiki"),
    )
    document = narrowed_report(skips=entries)
    why = judged(SkipPolicyCheck(), document)
    assert why is not None
    assert why.startswith("3 problems: ")
    assert why.endswith(
        "skip entry 'unit/opinfo/sin/float16/*' has no reason; "
        "skip entry 'unit/opinfo/cos/float16/*' has no tracking link"
    )


def test_skip_policy_names_an_entry_expired_at_the_run_date_once():
    expired = entry("unit/opinfo/sin/float16/*", expires=dt.date.today() - dt.timedelta(days=10))
    document = narrowed_report(
        finished=finished_ago(dt.timedelta(days=2)), skips=(expired,)
    )
    kinds = [v["kind"] for v in document["policy"]["violations"]]
    assert kinds == ["incomplete-run", "expired-skip"]
    why = judged(SkipPolicyCheck(), document)
    assert why is not None and why.startswith("2 problems: ")
    assert why.count("'unit/opinfo/sin/float16/*'") == 1 and "expired on" in why


def test_every_check_describes_itself_in_one_line(narrowed):
    checks = [
        ReleasedKitCheck(()), StandardCheck("v1"), TorchReleaseCheck("2.13"), VendorCheck(VENDOR),
        MinGradeCheck("conformant", grade_order()), MaxAgeCheck(365), SkipPolicyCheck(),
    ]
    names = [check.name for check in checks]
    assert len(set(names)) == len(names)
    for check in checks:
        assert check.describe() and "\n" not in check.describe()


def test_max_age_counts_one_day_as_one_day(narrowed):
    finished = dt.datetime.fromisoformat(narrowed["run"]["finished_at"])
    assert MaxAgeCheck(1).describe() == "the run finished at most 1 day ago"
    later = finished + dt.timedelta(days=2)
    assert judged(MaxAgeCheck(1), narrowed, now=later) == (
        f"the run finished on {finished.date()}, 2 days before {later.date()}; "
        "at most 1 day is accepted"
    )
