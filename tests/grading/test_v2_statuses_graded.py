"""How standard v2's new verdicts are graded, and what a v1 report makes of them.

A required test NOT_APPLICABLE because it draws random numbers (no device can match CPU's
draws) is no required test that failed; FAIL_SEMANTIC is a failure counted under its own key,
and a report built under v1, whose schema predates it, records it as FAIL_NUMERIC.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from report_helpers import REQUIRED, baseline_records, passing

from kit.report.schema import schema_problem
from kit.results import NA_REASON_KEY, NotApplicableReason, Status, TestRecord
from kit.standard import load_standard


def _with(records: list[TestRecord], status: Status, details: dict[str, Any]) -> list[TestRecord]:
    return [dataclasses.replace(r, status=status, details=details) if r.id == REQUIRED else r
            for r in records]


def test_a_required_random_sample_not_applicable_keeps_the_grade(make_report: Any) -> None:
    drawn = {NA_REASON_KEY: NotApplicableReason.DRAWS_RANDOM_NUMBERS.value, "reason": "draws"}
    report = make_report(_with(baseline_records(), Status.NOT_APPLICABLE, drawn))
    assert report["grade"] == {"name": "conformant", "reasons": []}
    assert report["unaccounted"] == []
    unclaimed = {NA_REASON_KEY: NotApplicableReason.UNCLAIMED_DTYPE.value, "reason": "unclaimed"}
    report = make_report(_with(baseline_records(), Status.NOT_APPLICABLE, unclaimed))
    assert report["grade"]["name"] != "conformant"  # a gap of the vendor's still counts


@pytest.mark.parametrize("code", [NotApplicableReason.UNCLAIMED_AUTOCAST,
                                  NotApplicableReason.NOT_IN_RELEASE])
def test_a_required_test_of_an_optional_capability_or_another_release_keeps_the_grade(
    make_report: Any, code: NotApplicableReason,
) -> None:
    """A device that autocasts in bfloat16 only (simnpu) is not failed on float16 autocast, and a
    canary is not failed on a sample its release no longer has."""
    reason = {NA_REASON_KEY: code.value, "reason": "why"}
    report = make_report(_with(baseline_records(), Status.NOT_APPLICABLE, reason))
    assert report["grade"] == {"name": "conformant", "reasons": []}
    assert report["unaccounted"] == []


def test_fail_semantic_is_its_own_count_under_v2_and_fail_numeric_under_v1(
    make_report: Any,
) -> None:
    records = _with(baseline_records(), Status.FAIL_SEMANTIC, {"failure": "wrong-shape"})
    v2 = make_report(records)
    assert v2["standard"]["version"] == "v2"
    assert v2["summary"]["overall"]["statuses"]["FAIL_SEMANTIC"] == 1
    assert v2["grade"]["name"] == "non-conformant"
    v1_standard = dataclasses.replace(load_standard("v1"), test_lists={})
    v1 = make_report(records, standard_override=v1_standard)
    [recorded] = [r for r in v1["records"] if r["id"] == REQUIRED]
    assert (recorded["status"], recorded["details"]) == ("FAIL_NUMERIC", {"failure": "wrong-shape"})
    assert "FAIL_SEMANTIC" not in v1["summary"]["overall"]["statuses"]
    assert v1["summary"]["overall"]["statuses"]["FAIL_NUMERIC"] == 1
    assert schema_problem(v1) is None and schema_problem(v2) is None


BEYOND_EAGER = ("compile/opinfo/abs/float32/0", "distributed/all_gather/float32/small/2")


@pytest.mark.parametrize("test_id", BEYOND_EAGER)
def test_a_claimed_compile_or_collective_that_fails_is_a_required_test_not_passed(
    make_report: Any, test_id: str,
) -> None:
    """A profile that claims a dynamo backend or a process group has each of those tests
    required: one that fails grades non-conformant and is named."""
    # Enough passing tests that the pass rate alone would allow conformant-with-exceptions.
    others = [f"unit/opinfo/sin/float64/{n}" for n in range(1, 40)]
    records = baseline_records() + passing(test_id, *others)
    failed = [dataclasses.replace(r, status=Status.FAIL_NUMERIC) if r.id == test_id else r
              for r in records]
    report = make_report(failed)
    assert report["grade"]["name"] == "non-conformant"
    assert any(f"{test_id} (FAIL_NUMERIC)" in reason for reason in report["grade"]["reasons"])


@pytest.mark.parametrize(("test_id", "code"), [
    (BEYOND_EAGER[0], NotApplicableReason.UNCLAIMED_COMPILE_BACKEND),
    (BEYOND_EAGER[1], NotApplicableReason.UNCLAIMED_PROCESS_GROUP),
])
def test_an_unclaimed_compile_backend_or_process_group_keeps_the_grade(
    make_report: Any, test_id: str, code: NotApplicableReason,
) -> None:
    """An inference runtime that offers neither torch.compile nor collectives is not failed on
    them: both are optional capabilities, required only of a profile that claims them."""
    unclaimed = {NA_REASON_KEY: code.value, "reason": "not claimed"}
    records = baseline_records() + [
        TestRecord(id=test_id, status=Status.NOT_APPLICABLE, duration_s=0.0, details=unclaimed)]
    report = make_report(records)
    assert report["grade"] == {"name": "conformant", "reasons": []}


@pytest.mark.parametrize(("model", "grade"), [
    ("compile/models/hf/resnet/eager", "non-conformant"),
    ("compile/models/hf/resnet/train", "conformant-with-exceptions"),
])
def test_a_compiled_models_forward_is_required_and_its_training_step_counts_in_the_pass_rate(
    make_report: Any, model: str, grade: str
) -> None:
    """As in the models tier (``models/hf/*/eager`` required since v1): a Hugging Face model's
    compiled forward that fails fails the grade; its compiled training step is an exception."""
    others = [f"unit/opinfo/sin/float64/{n}" for n in range(1, 40)]
    records = [dataclasses.replace(r, status=Status.FAIL_NUMERIC) if r.id == model else r
               for r in baseline_records() + passing(model, *others)]
    assert make_report(records)["grade"]["name"] == grade
