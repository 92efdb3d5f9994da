"""The release under test is part of the grade: a run on another torch release is not-certifiable.

Judged on the torch version the report's environment records, never on the torch of the
process that builds the report.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from report_helpers import REQUIRED, baseline_records

from kit.errors import InputError
from kit.formats import write_report_files
from kit.formats.markdown import MarkdownFormat
from kit.grading.grading import grade_report
from kit.results import Status, TestRecord
from kit.standard import Standard, load_standard, torch_release_of
from kit.standard.catalogue import standard_directory

WRONG_RELEASE = "2.11.0+cu130"
CURRENT = load_standard()
TORCH_REASON = (f"ran torch {WRONG_RELEASE}; standard {CURRENT.version} certifies "
                f"{CURRENT.torch_release}")


def recorded_with(environment: dict[str, Any], torch_version: str) -> dict[str, Any]:
    """The environment of a run made on ``torch_version``."""
    return {**environment, "torch": {**environment["torch"], "version": torch_version}}


@pytest.fixture
def report_on(make_report, environment):
    def make(torch_version: str, records: list[TestRecord] | None = None) -> dict[str, Any]:
        return make_report(
            baseline_records() if records is None else records,
            environment_override=recorded_with(environment, torch_version),
        )

    return make


def test_this_machine_runs_the_certified_release(environment, standard: Standard):
    # The other tests only mean something if the building process runs the certified torch.
    assert torch_release_of(environment["torch"]["version"]) == standard.torch_release == "2.13.0"


def test_wrong_release_is_not_certifiable_even_at_full_pass(report_on):
    report = report_on(WRONG_RELEASE)
    assert report["summary"]["overall"]["pass_rate"] == 1.0
    assert report["policy"]["violations"] == []
    assert report["environment"]["torch"]["version"] == WRONG_RELEASE
    assert report["grade"] == {
        "name": "not-certifiable",
        "reasons": [
            f"{TORCH_REASON}: conformant, conformant-with-exceptions and non-conformant need a "
            "run on torch 2.13.0 (any local build, such as 2.13.0+cpu); install torch 2.13.0 "
            "and rerun"
        ],
    }


@pytest.mark.parametrize("version", ["2.13.0+cpu", "2.13.0+cu130", "2.13.0"])
def test_the_certified_release_with_any_local_build_is_certifiable(report_on, version: str):
    assert report_on(version)["grade"] == {"name": "conformant", "reasons": []}


@pytest.mark.parametrize(
    "version", ["2.11.0+cu130", "2.13.1+cpu", "2.13.0rc1", "2.13.0a0+git1234abc", "2.13"]
)
def test_any_other_release_is_not_certifiable(report_on, version: str):
    report = report_on(version)
    assert report["grade"]["name"] == "not-certifiable"
    reason = report["grade"]["reasons"][0]
    assert reason.startswith(f"ran torch {version}; standard {CURRENT.version} certifies")


def test_other_shortfalls_are_still_reported_after_the_release(report_on):
    records = [
        TestRecord(r.id, Status.FAIL_NUMERIC, 0.1, "differ") if r.id == REQUIRED else r
        for r in baseline_records()
    ]
    reasons = report_on(WRONG_RELEASE, records)["grade"]["reasons"]
    assert len(reasons) == 3
    assert reasons[0].startswith(TORCH_REASON)
    assert "pass rate is 80.00%" in reasons[1]
    assert reasons[2].startswith(f"1 required test did not pass: {REQUIRED} (FAIL_NUMERIC)")
    assert "conformant and conformant-with-exceptions need every required test" in reasons[2]


def test_a_failing_run_on_the_right_release_stays_non_conformant(report_on):
    records = [TestRecord(r.id, Status.ERROR, 0.1, "boom") for r in baseline_records()]
    report = report_on("2.13.0+cpu", records)
    assert report["grade"]["name"] == "non-conformant"
    assert not any("ran torch" in reason for reason in report["grade"]["reasons"])


def test_summary_names_the_grade_the_run_and_the_reason(report_on):
    text = MarkdownFormat().render(report_on(WRONG_RELEASE)).decode("utf-8")
    title = text.splitlines()[0]
    assert title.startswith("# ⛔ ") and title.endswith(": not-certifiable")
    assert "PyTorch 2.13.0 (ran 2.11.0+cu130)" in text
    assert "## Why not a better grade" in text
    assert f"- {TORCH_REASON}: conformant, conformant-with-exceptions and non-conformant" in text


def test_a_report_read_from_disk_grades_the_same(report_on, standard: Standard, tmp_path: Path):
    written = write_report_files(report_on(WRONG_RELEASE), tmp_path)
    report = json.loads(written["report.json"].read_text(encoding="utf-8"))
    assert grade_report(standard, report) == report["grade"]
    assert report["grade"]["name"] == "not-certifiable"


def test_an_environment_without_a_torch_version_cannot_be_graded(report_on, standard: Standard):
    report = report_on("2.13.0+cpu")
    report["environment"]["torch"]["version"] = None
    with pytest.raises(InputError, match="records no torch version"):
        grade_report(standard, report)


# --- the grade as the standard declares it ----------------------------------------------------


def test_not_certifiable_is_the_last_grade_and_the_only_one_off_release():
    grades = load_standard().grades
    assert [g.name for g in grades] == [
        "conformant", "conformant-with-exceptions", "non-conformant", "not-certifiable",
    ]
    assert [g.certified_torch_release for g in grades] == [True, True, True, False]
    last = grades[-1]
    assert (last.min_pass_rate, last.all_required_passed, last.max_policy_violations) == (
        0.0, False, -1,
    )


def test_the_schema_enum_is_the_standards_grades():
    schema = json.loads(load_standard().file("report.schema.json").read_text())
    names = schema["properties"]["grade"]["properties"]["name"]["enum"]
    assert names == [g.name for g in load_standard().grades]


def test_a_quoted_flag_is_refused(tmp_path: Path):
    source = standard_directory("v1") / "standard.yaml"  # states the flag itself
    text = source.read_text(encoding="utf-8")
    (tmp_path / "standard.yaml").write_text(
        text.replace("certified_torch_release: false", 'certified_torch_release: "false"'),
        encoding="utf-8",
    )
    quoted = r"certified_torch_release: expected true or false \(unquoted\), got 'false'"
    with pytest.raises(InputError, match=quoted):
        load_standard(directory=tmp_path)


def test_a_standard_whose_grades_all_need_the_release_grades_nothing(
    report_on, standard: Standard
):
    on_release_only = dataclasses.replace(standard, grades=standard.grades[:-1])
    with pytest.raises(InputError, match="certified_torch_release false"):
        grade_report(on_release_only, report_on(WRONG_RELEASE))
