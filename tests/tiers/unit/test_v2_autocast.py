"""Standard v2's autocast: ``autocast-<dtype>`` calls an op under ``torch.autocast`` on the
device, its result dtypes CPU autocast's, its values judged in the dtype they have; simnpu's
training faults (an op autocast runs in the wrong dtype, a ``.grad`` overwritten instead of
accumulated) are each caught on their family's id while the op's forward tests pass."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from unit_helpers import UnitRun, plant_apart

from kit.errors import InputError
from kit.outcomes import SemanticMismatch
from kit.results import NotApplicableReason
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.checking import execute_case, judge_case
from kit.tiers.unit.config import parse_unit_config
from kit.tiers.unit.tier import UnitTier
from kit.vendors import load_vendor

STANDARD = load_standard()
LOCKED = set(STANDARD.test_ids("unit"))
MM = "unit/opinfo/mm/float32/autocast-bfloat16"
MSE = "unit/opinfo/nn.functional.mse_loss/bfloat16/autocast-bfloat16"
MM_FLOAT16 = "unit/opinfo/mm/float32/autocast-float16"
MM_FORWARD = "unit/opinfo/mm/float32/0"
MM_BACKWARD = "unit/opinfo/mm/float32/backward-0"
ADD_INPLACE = "unit/opinfo/add/float32/inplace"


def test_autocast_ids_lock_per_input_and_autocast_dtype_and_stay_few() -> None:
    autocast = {i for i in LOCKED if "/autocast-" in i}
    assert {MM, MSE, MM_FLOAT16, "unit/opinfo/cat/float32/autocast-bfloat16"} <= autocast
    assert len(autocast) <= 200
    assert not any("/int" in i or "/float64/" in i for i in autocast)


@pytest.mark.parametrize(("test_id", "expected"), [
    (MM, ("torch.bfloat16",)),  # a lower-precision op lowers its float32 inputs
    (MSE, ("torch.float32",)),  # a float32 op widens its bfloat16 inputs
    ("unit/opinfo/softmax/bfloat16/autocast-bfloat16", ("torch.bfloat16",)),  # unlisted on CPU
])
def test_cpu_autocast_decides_the_dtypes_and_a_device_ignoring_it_fails_by_name(
        test_id: str, expected: tuple[str, ...]) -> None:
    case = unit_case(STANDARD, test_id)
    evidence = execute_case("cpu", case)
    judge_case(STANDARD, case, evidence)
    assert evidence.facts is not None
    facts = evidence.facts
    assert tuple(facts.values()) == (expected,)
    plain = {name: ("torch.float32",) if value == ("torch.bfloat16",) else ("torch.bfloat16",)
             for name, value in facts.items()}
    with pytest.raises(SemanticMismatch) as caught:
        judge_case(STANDARD, case, replace(evidence, facts=plain))
    assert caught.value.details()["failure"] == "autocast-dtype"


def test_the_kit_decides_autocast_in_an_unclaimed_dtype_not_applicable() -> None:
    tier, simnpu = UnitTier(), load_vendor("simnpu")
    assert simnpu.autocast == ("bfloat16",)
    assert tier.inapplicable(STANDARD, simnpu, MM) is None
    found = tier.inapplicable(STANDARD, simnpu, MM_FLOAT16)
    assert found is not None and found.reason is NotApplicableReason.UNCLAIMED_AUTOCAST
    assert "autocast in float16" in found.words
    unclaimed = dataclasses.replace(load_vendor("cpu"), autocast=())
    found = tier.inapplicable(STANDARD, unclaimed, MM)
    assert found is not None and found.reason is NotApplicableReason.UNCLAIMED_AUTOCAST
    assert tier.inapplicable(STANDARD, unclaimed, MM_FORWARD) is None


def _with_autocast(rule: dict[str, Any]) -> dict[str, Any]:
    return {"coverage": {"variants": {"autocast": {"ops": ["mm"], **rule}}},
            "ops": [{"op": "mm", "dtypes": ["float32"], "class": "reduction"}]}


@pytest.mark.parametrize(("rule", "field"), [
    ({"autocast": ["float32"], "least_class": "composite"}, "autocast"),
    ({"autocast": ["bfloat16"]}, "least_class"),
])
def test_a_malformed_autocast_rule_is_one_line_error_naming_the_field(
        rule: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_unit_config(_with_autocast(rule), Path("/standards/v2/unit.yaml"))
    message = str(caught.value)
    assert "\n" not in message and f"coverage.variants.autocast.{field}" in message, message


#: Both training faults planted in one run: neither touches the other's tests. Their run is the
#: second shared one (``plant_apart``): ``overwrite_grad`` fires on every gradient accumulated,
#: the backward tests of the first shared run included.
FAULTS = [{"op": "mm", "kind": "autocast_dtype"},
          {"op": "aten::add_.Tensor", "kind": "overwrite_grad"}]
plant_apart(FAULTS, [MM, MSE, MM_FLOAT16, MM_FORWARD, MM_BACKWARD, ADD_INPLACE])


@pytest.fixture(scope="module")
def faulty_run(planted_apart_run: UnitRun) -> dict[str, dict[str, Any]]:
    return planted_apart_run.records


@pytest.mark.slow(seconds=80)
def test_an_op_autocast_runs_in_the_wrong_dtype_fails_its_autocast_id_only(
        faulty_run: dict[str, dict[str, Any]]) -> None:
    caught = faulty_run[MM]
    assert caught["status"] == "FAIL_SEMANTIC", caught["message"]
    assert caught["details"]["failure"] == "autocast-dtype", caught["details"]
    assert "float32" in caught["message"] and "bfloat16" in caught["message"]
    for control in (MM_FORWARD, MSE):
        assert faulty_run[control]["status"] == "PASS", faulty_run[control]["message"]
    unclaimed = faulty_run[MM_FLOAT16]
    assert unclaimed["status"] == "NOT_APPLICABLE"
    assert unclaimed["details"]["na_reason"] == "unclaimed-autocast"


def test_a_gradient_overwriting_grad_fails_the_accumulated_gradient_only(
        faulty_run: dict[str, dict[str, Any]]) -> None:
    caught = faulty_run[MM_BACKWARD]
    assert caught["status"] == "FAIL_NUMERIC", caught["message"]
    assert "accumulated twice" in caught["message"]
    # add_ itself stays right outside autograd's AccumulateGrad, and mm's forward too.
    for control in (ADD_INPLACE, MM_FORWARD):
        assert faulty_run[control]["status"] == "PASS", faulty_run[control]["message"]
