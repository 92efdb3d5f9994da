"""Attacks on what a grade means, each named after what it tries, on real standard v1.

The records are constructed; how the kit produces them is checked where it matters (the plugin's
mapping of skips, the real `ckit run` with CKIT_TODAY in test_report_clock_run.py).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import pytest
from report_helpers import OPTIONAL, REQUIRED, TODAY, baseline_records, passing, skip_entry

from kit.clock import RunDate
from kit.errors import InputError
from kit.formats import write_report_files
from kit.formats.markdown import MarkdownFormat
from kit.grading.grading import grade_report
from kit.grading.policy import KINDS
from kit.outcomes import not_applicable
from kit.pytest_plugin import phase_verdict
from kit.results import NA_REASON_KEY, NotApplicableReason, Status, TestRecord
from kit.standard import Standard, load_standard

#: Optional (not required, not never-skip) unit tests: float64 is neither under v1.
FILLER = [f"unit/opinfo/op{i:03}/float64/0" for i in range(195)]


def with_locked_unit_list(standard: Standard, tmp_path: Path, ids: list[str]) -> Standard:
    (tmp_path / "unit.txt").write_text("\n".join(ids) + "\n", encoding="utf-8")
    return dataclasses.replace(standard, directory=tmp_path, test_lists={"unit": "unit.txt"})


def full_run() -> list[TestRecord]:
    """200 passing tests, 198 of them in the unit tier."""
    return baseline_records() + passing(*FILLER)


def as_status(records: list[TestRecord], ids: list[str], status: Status, **details: str):
    chosen = set(ids)
    return [
        TestRecord(r.id, status, 0.0, "", dict(details)) if r.id in chosen else r for r in records
    ]


def reason_starting(report: dict, words: str) -> str:
    (reason,) = [r for r in report["grade"]["reasons"] if r.startswith(words)]
    return reason


# --- every test of the standard is accounted for ----------------------------------------------


def test_hidden_tests_missing_from_records(make_report, standard: Standard, tmp_path: Path):
    # A vendor module hides 8 optional tests from collection: no record, no skip entry.
    records = full_run()
    hidden = FILLER[:8]
    locked = with_locked_unit_list(standard, tmp_path, sorted(r.id for r in records
                                                               if r.tier == "unit"))
    report = make_report([r for r in records if r.id not in hidden], standard_override=locked)
    assert report["missing"] == hidden
    assert [(u["test"], u["status"]) for u in report["unaccounted"]] == [
        (test_id, "MISSING") for test_id in hidden
    ]
    # Completeness is judged from the records: a run missing tests covers less than the
    # standard, whatever its command line said.
    assert report["run"]["complete"] is False
    assert report["grade"]["name"] == "non-conformant"
    assert [v["kind"] for v in report["policy"]["violations"]] == ["incomplete-run"]
    assert "(192 of 200 tests passed, 8 did not, counting 8 tests not accounted for as " \
        "failures)" in reason_starting(report, "pass rate is 96.00%")
    unaccounted = reason_starting(report, "8 tests of the standard not accounted for")
    assert f"no record at all (8): {', '.join(hidden)};" in unaccounted
    assert "conformant needs every test to have a record" in unaccounted
    summary = MarkdownFormat().render(report).decode("utf-8")
    assert "## Tests not accounted for, counted as failures (8)" in summary


def test_hiding_tests_never_grades_better_than_failing_them(
    make_report, standard: Standard, tmp_path: Path
):
    records = full_run()
    locked = with_locked_unit_list(standard, tmp_path, [r.id for r in records if r.tier == "unit"])
    for count in (1, 8, 20):
        hidden = FILLER[:count]
        hiding = make_report([r for r in records if r.id not in hidden], standard_override=locked)
        failing = make_report(as_status(records, hidden, Status.FAIL_NUMERIC),
                              standard_override=locked)
        ranks = [grade.name for grade in locked.grades]  # best first
        assert ranks.index(hiding["grade"]["name"]) >= ranks.index(failing["grade"]["name"])
        assert failing["grade"]["name"] != "conformant"


@pytest.mark.parametrize(
    "details",
    [
        {"reason": "vendor kernel: not today"},  # the vendor's own pytest.skip
        {"reason": "vendor does not claim dtype float64"},  # the kit's words, without its code
        {NA_REASON_KEY: "vendor-decided", "reason": "made-up code"},
    ],
    ids=["plain-skip", "kit-words-no-code", "unknown-code"],
)
def test_vendor_kernel_calls_pytest_skip(make_report, details: dict[str, str]):
    records = as_status(full_run(), [OPTIONAL], Status.NOT_APPLICABLE, **details)
    report = make_report(records)
    (unaccounted,) = report["unaccounted"]
    assert (unaccounted["test"], unaccounted["status"]) == (OPTIONAL, "NOT_APPLICABLE")
    assert report["grade"]["name"] == "conformant-with-exceptions"
    reason = reason_starting(report, "1 test of the standard not accounted for")
    codes = ", ".join(code.value for code in NotApplicableReason)
    assert f"the kit's reasons: {codes}) (1): {OPTIONAL};" in reason


@pytest.mark.parametrize("code", list(NotApplicableReason))
def test_not_applicable_for_a_kit_reason_is_accounted_for(make_report, code):
    records = as_status(full_run(), [OPTIONAL], Status.NOT_APPLICABLE, na_reason=code.value)
    report = make_report(records)
    assert report["unaccounted"] == []
    assert report["grade"] == {"name": "conformant", "reasons": []}


def test_a_vendor_skip_becomes_not_applicable_without_a_kit_reason_code():
    vendor = pytest.CallInfo.from_call(lambda: pytest.skip("vendor kernel: not today"), "call")
    verdict = phase_verdict(skip_report("vendor kernel: not today"), vendor, {})
    assert verdict is not None
    assert (verdict.status, verdict.details) == (
        Status.NOT_APPLICABLE, {"reason": "vendor kernel: not today"})


def test_the_kit_not_applicable_carries_its_reason_code():
    words = "vendor acme does not claim dtype float64"
    kit = pytest.CallInfo.from_call(
        lambda: not_applicable(NotApplicableReason.UNCLAIMED_DTYPE, words), "call"
    )
    verdict = phase_verdict(skip_report(f"not applicable: {words}"), kit, {})
    assert verdict is not None and verdict.status is Status.NOT_APPLICABLE
    assert verdict.details == {NA_REASON_KEY: "unclaimed-dtype", "reason": words}


def skip_report(message: str) -> pytest.TestReport:
    return pytest.TestReport(
        "t.py::test[case]", ("t.py", 1, "test"), {}, "skipped", ("t.py", 1, f"Skipped: {message}"),
        "call",
    )


def test_skipped_without_a_manifest_entry(make_report, manifest):
    # The record says "skip manifest", but no entry of the manifest covers the test.
    skips = manifest([skip_entry("unit/opinfo/other/float64/*")])
    records = as_status(full_run(), [OPTIONAL], Status.SKIPPED, reason="skip manifest: infra")
    report = make_report(records, skips=skips)
    assert report["unaccounted"] == [{
        "test": OPTIONAL, "status": "SKIPPED",
        "why": "skipped, but no unexpired skip-manifest entry covers it",
    }]
    assert report["grade"]["name"] == "conformant-with-exceptions"


# --- limits on skipping ------------------------------------------------------------------------


def test_skip_everything_until_9999(make_report, manifest, standard):
    skips = manifest([skip_entry("unit/opinfo/*/float64/*", expires="9999-12-31")])
    records = as_status(full_run(), FILLER + [OPTIONAL], Status.SKIPPED)
    report = make_report(records, skips=skips)
    assert report["unaccounted"] == []  # the entry covers them: counted, but not as run
    assert report["grade"]["name"] == "non-conformant"
    (violation,) = report["policy"]["violations"]
    assert violation["kind"] == "skip-too-long"
    assert "expires 9999-12-31, more than 180 days after standard " \
        f"{standard.version} was released ({standard.released}); " \
        f"set {standard.latest_skip_expiry} or earlier" in violation["message"]
    share = reason_starting(report, "the skip manifest skipped too much")
    assert "unit 196 of 198 tests (98.99%)" in share
    assert "conformant allows at most 2%, conformant-with-exceptions 5% of each tier" in share


@pytest.mark.parametrize(
    ("skipped", "grade"),
    [(3, "conformant"), (4, "conformant-with-exceptions"), (9, "conformant-with-exceptions"),
     (10, "non-conformant")],
)
def test_skipped_share_per_tier(make_report, manifest, skipped: int, grade: str):
    # 198 unit tests: 2% is 3.96 tests, 5% is 9.9.
    skips = manifest([skip_entry("unit/opinfo/*/float64/*")])
    report = make_report(as_status(full_run(), FILLER[:skipped], Status.SKIPPED), skips=skips)
    assert report["grade"]["name"] == grade


def test_the_schema_lists_every_violation_kind():
    schema = json.loads(load_standard().file("report.schema.json").read_text())
    kinds = schema["$defs"]["violation"]["properties"]["kind"]["enum"]
    assert kinds == list(KINDS)


# --- the date comes from the clock -------------------------------------------------------------


def test_clock_set_back_with_CKIT_TODAY(make_report, manifest, standard: Standard, tmp_path):
    # Expired on the real date; set back, the entry still skips and the run would pass.
    skips = manifest([skip_entry("unit/opinfo/sin/float64/*", expires="2025-06-30")])
    records = as_status(full_run(), [OPTIONAL], Status.SKIPPED)
    honest = make_report(records, skips=skips)
    assert honest["grade"]["name"] == "non-conformant"
    set_back = RunDate(clock_today=TODAY, override=dt.date(2024, 12, 31))
    report = make_report(records, skips=skips, clock=set_back)
    assert report["policy"]["violations"] == []
    assert {k: report["run"][k] for k in ("today", "clock_today", "clock_override")} == {
        "today": "2024-12-31", "clock_today": "2026-11-22", "clock_override": True,
    }
    assert report["grade"] == {
        "name": "not-certifiable",
        "reasons": [
            "the run's date was set by CKIT_TODAY to 2024-12-31 while the system clock said "
            "2026-11-22, and the date decides which skip-manifest entries have expired: "
            "conformant, conformant-with-exceptions and non-conformant need a run on the system "
            "clock's date; rerun without CKIT_TODAY"
        ],
    }
    written = write_report_files(report, tmp_path)
    assert grade_report(standard, json.loads(written["report.json"].read_text())) == \
        report["grade"]
    assert "The run's date was overridden" in written["summary.md"].read_text()


def test_a_report_claiming_the_clock_but_dated_otherwise_cannot_be_graded(
    make_report, standard: Standard
):
    report = make_report(full_run())
    report["run"]["today"] = "2024-12-31"  # edited, with clock_override still false
    with pytest.raises(InputError, match="records no valid today"):
        grade_report(standard, report)


def test_unaccounted_required_test_is_named_in_both_reasons(make_report):
    report = make_report(as_status(full_run(), [REQUIRED], Status.NOT_APPLICABLE))
    assert report["grade"]["name"] == "non-conformant"
    assert f"{REQUIRED} (NOT_APPLICABLE)" in reason_starting(report, "1 required test")
    assert REQUIRED in reason_starting(report, "1 test of the standard not accounted for")
