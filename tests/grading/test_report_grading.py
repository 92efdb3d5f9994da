"""Grading and skip policy, judged on real standard v1 and real skip manifests."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from report_helpers import (
    OPTIONAL,
    REQUIRED,
    REQUIRED_NEVER_SKIP,
    baseline_records,
    passing,
    run_info,
    skip_entry,
)

from kit.errors import InputError
from kit.results import Status, TestRecord
from kit.standard import Standard, load_standard


def replace_status(records: list[TestRecord], test_id: str, status: Status, message: str = ""):
    return [
        dataclasses.replace(r, status=status, message=message) if r.id == test_id else r
        for r in records
    ]


def kinds(report: dict) -> list[str]:
    return [v["kind"] for v in report["policy"]["violations"]]


def test_all_pass_is_conformant_without_reasons(make_report):
    report = make_report(baseline_records())
    assert report["grade"] == {"name": "conformant", "reasons": []}
    assert report["policy"]["violations"] == []
    assert report["summary"]["overall"]["pass_rate"] == 1.0


def test_required_failure_is_non_conformant_and_names_the_test(make_report):
    records = replace_status(baseline_records(), REQUIRED, Status.FAIL_NUMERIC, "2/8 differ")
    report = make_report(records)
    assert report["grade"]["name"] == "non-conformant"
    required_reason = [r for r in report["grade"]["reasons"] if "required" in r]
    assert len(required_reason) == 1
    assert f"{REQUIRED} (FAIL_NUMERIC)" in required_reason[0]
    # Said once for both better grades, naming both.
    assert "conformant and conformant-with-exceptions need" in required_reason[0]


def test_pass_rate_between_thresholds_is_conformant_with_exceptions(make_report):
    # 19 of 20 tests that ran pass (95%), and the one failure is not a required test.
    optional = [f"unit/opinfo/op{i}/float64/0" for i in range(15)]
    records = baseline_records() + passing(*optional)
    records = replace_status(records, OPTIONAL, Status.ERROR, "RuntimeError: boom")
    report = make_report(records)
    assert report["summary"]["overall"]["pass_rate"] == 0.95
    assert report["grade"]["name"] == "conformant-with-exceptions"
    (reason,) = report["grade"]["reasons"]
    assert "pass rate is 95.00% (19 of 20 tests that ran passed, 1 did not)" in reason
    assert "conformant needs at least 100%" in reason


def test_pass_rate_below_both_thresholds_is_non_conformant(make_report):
    records = replace_status(baseline_records(), OPTIONAL, Status.UNSUPPORTED)
    report = make_report(records)  # 4 of 5 pass: 80%
    assert report["grade"]["name"] == "non-conformant"
    (reason,) = report["grade"]["reasons"]  # one pass-rate reason naming both thresholds
    assert "pass rate is 80.00% (4 of 5 tests that ran passed, 1 did not)" in reason
    assert "conformant needs at least 100%, conformant-with-exceptions 95%" in reason


def test_never_skip_test_skipped_is_a_violation(make_report, manifest):
    skips = manifest([skip_entry("unit/opinfo/add/float32/*")])
    records = replace_status(baseline_records(), REQUIRED_NEVER_SKIP, Status.SKIPPED)
    report = make_report(records, skips=skips)
    (violation,) = report["policy"]["violations"]
    assert violation["kind"] == "never-skip"
    assert violation["test"] == REQUIRED_NEVER_SKIP
    assert "'unit/opinfo/add/float32/*'" in violation["message"]
    assert report["grade"]["name"] == "non-conformant"
    assert any("1 skip-policy violation" in r for r in report["grade"]["reasons"])


def test_allowed_skip_of_an_optional_test_stays_conformant(make_report, manifest):
    skips = manifest([skip_entry("unit/opinfo/sin/float64/*")])
    # 1 of 60 unit tests skipped: within conformant's 2% of a tier.
    many = passing(*(f"unit/opinfo/op{i}/float64/0" for i in range(57)))
    records = replace_status(baseline_records() + many, OPTIONAL, Status.SKIPPED)
    report = make_report(records, skips=skips)
    assert report["grade"]["name"] == "conformant"
    assert report["summary"]["overall"]["ran"] == 61


def test_skipped_required_test_fails_all_required_passed(make_report, manifest):
    skips = manifest([skip_entry("unit/opinfo/sin/float32/*")])
    records = replace_status(baseline_records(), REQUIRED, Status.SKIPPED)
    report = make_report(records, skips=skips)
    assert report["grade"]["name"] == "non-conformant"
    assert any(f"{REQUIRED} (SKIPPED)" in r for r in report["grade"]["reasons"])


def test_not_applicable_required_test_fails_all_required_passed(make_report):
    records = replace_status(baseline_records(), "models/hf/bert/eager", Status.NOT_APPLICABLE)
    report = make_report(records)
    assert report["grade"]["name"] == "non-conformant"
    assert any("models/hf/bert/eager (NOT_APPLICABLE)" in r for r in report["grade"]["reasons"])


def test_expired_entry_is_a_violation_even_when_its_tests_pass(make_report, manifest):
    skips = manifest([skip_entry("unit/opinfo/sin/float64/*", expires="2026-11-21")])
    report = make_report(baseline_records(), skips=skips)
    assert kinds(report) == ["expired-skip"]
    assert report["policy"]["violations"][0]["entry"] == "unit/opinfo/sin/float64/*"
    assert [e["test"] for e in report["skip_manifest"]["expired"]] == ["unit/opinfo/sin/float64/*"]
    assert report["grade"]["name"] == "non-conformant"
    (reason,) = report["grade"]["reasons"]
    assert "expired on 2026-11-21" in reason and "renew the entry" in reason


def test_entry_expiring_today_is_still_valid(make_report, manifest):
    skips = manifest([skip_entry("unit/opinfo/sin/float64/*", expires="2026-11-22")])
    report = make_report(baseline_records(), skips=skips)
    assert report["skip_manifest"]["expired"] == []
    assert report["grade"]["name"] == "conformant"


def test_incomplete_run_cannot_be_conformant(make_report):
    run = run_info(complete=False, tiers=["unit"], select=["unit/opinfo/*/*/*"])
    report = make_report(baseline_records(), run=run)
    (violation,) = report["policy"]["violations"]
    assert violation["kind"] == "incomplete-run"
    assert "tiers unit" in violation["message"] and "'unit/opinfo/*/*/*'" in violation["message"]
    assert report["grade"]["name"] == "non-conformant"


def test_stale_entry_is_reported_but_not_a_violation(make_report, manifest):
    skips = manifest([skip_entry("unit/opinfo/no_such_op/*/*")])
    report = make_report(baseline_records(), skips=skips)
    assert [e["test"] for e in report["skip_manifest"]["stale"]] == ["unit/opinfo/no_such_op/*/*"]
    assert report["policy"]["violations"] == []
    assert report["grade"]["name"] == "conformant"


def test_missing_required_test_from_the_locked_list(
    make_report, standard: Standard, tmp_path: Path
):
    locked_ids = [REQUIRED_NEVER_SKIP, REQUIRED, OPTIONAL, "unit/opinfo/cos/float32/0"]
    (tmp_path / "unit.txt").write_text("# locked list\n" + "\n".join(locked_ids), encoding="utf-8")
    locked = dataclasses.replace(standard, directory=tmp_path, test_lists={"unit": "unit.txt"})
    report = make_report(baseline_records(), standard_override=locked)
    assert report["missing"] == ["unit/opinfo/cos/float32/0"]
    assert report["summary"]["tiers"]["unit"]["missing"] == 1
    assert report["grade"]["name"] == "non-conformant"
    assert any("unit/opinfo/cos/float32/0 (MISSING)" in r for r in report["grade"]["reasons"])


def test_missing_ids_outside_the_selection_are_not_counted(
    make_report, standard: Standard, tmp_path: Path
):
    (tmp_path / "unit.txt").write_text(f"{REQUIRED}\nunit/opinfo/cos/float32/0\n", encoding="utf-8")
    locked = dataclasses.replace(standard, directory=tmp_path, test_lists={"unit": "unit.txt"})
    run = run_info(complete=False, tiers=["unit"], select=["unit/opinfo/sin/*/*"])
    report = make_report(passing(REQUIRED), standard_override=locked, run=run)
    assert report["missing"] == []


def test_nothing_ran_has_no_pass_rate(make_report, manifest):
    skips = manifest([skip_entry("unit/opinfo/sin/float64/*")])
    report = make_report([TestRecord(OPTIONAL, Status.SKIPPED)], skips=skips)
    assert report["summary"]["overall"]["pass_rate"] is None
    assert report["grade"]["name"] == "non-conformant"
    assert any(r.startswith("no test ran") for r in report["grade"]["reasons"])


def test_required_reason_lists_ten_ids_then_counts_the_rest(make_report):
    failing = [TestRecord(f"unit/opinfo/op{i:02}/float32/0", Status.CRASH) for i in range(13)]
    report = make_report(failing)
    (reason,) = [r for r in report["grade"]["reasons"] if "required" in r]
    assert reason.startswith("13 required tests did not pass: unit/opinfo/op00/float32/0 (CRASH)")
    assert "unit/opinfo/op09/float32/0" in reason and "op10" not in reason
    assert "... and 3 more" in reason


def test_standard_without_a_catch_all_grade_is_an_input_error(make_report, standard: Standard):
    strict = dataclasses.replace(standard, grades=standard.grades[:1])
    records = replace_status(baseline_records(), OPTIONAL, Status.ERROR)
    with pytest.raises(InputError, match="no grade accepts this run"):
        make_report(records, standard_override=strict)


def test_a_narrowed_run_calls_stale_only_entries_no_test_of_the_standard_matches(
    make_report, manifest
):
    """An entry the narrowed run did not use may skip a test it left out: not stale."""
    unused, gone = "unit/opinfo/sin/float64/*", "unit/opinfo/no_such_op/*/*"
    skips = manifest([skip_entry(unused), skip_entry(gone)])
    run = run_info(complete=False, tiers=["unit"], select=["unit/opinfo/add/*/*"])
    records = [r for r in baseline_records() if r.id.startswith("unit/opinfo/add/")]
    # The checkout's locked lists: what "a test of the standard" means.
    report = make_report(records, skips=skips, run=run, standard_override=load_standard())
    assert [e["test"] for e in report["skip_manifest"]["stale"]] == [gone]
    complete = make_report([r for r in baseline_records() if not r.id.startswith(
        "unit/opinfo/sin/")], skips=skips)
    assert [e["test"] for e in complete["skip_manifest"]["stale"]] == [unused, gone]
