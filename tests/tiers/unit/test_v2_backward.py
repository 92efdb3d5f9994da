"""Standard v2's gradients: ``backward-<n>`` computes an op's gradients on the device and
accumulates them into ``.grad`` twice; each is judged against CPU's float64 gradients.
``inplacebackward-<n>`` does so through the op's in-place variant, and compares autograd's
version-counter error with CPU's."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from unit_helpers import plant

from kit.errors import InputError
from kit.outcomes import NumericMismatch, SemanticMismatch
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.checking import execute_case, judge_case
from kit.tiers.unit.config import parse_unit_config

STANDARD = load_standard()
LOCKED = set(STANDARD.test_ids("unit"))
MM = "unit/opinfo/mm/float32/backward-0"
TANH = "unit/opinfo/tanh/float32/backward-0"
MUL_INPLACE = "unit/opinfo/mul/float32/inplacebackward-5"
SIGMOID_INPLACE = "unit/opinfo/sigmoid/float32/inplacebackward-0"


def test_backward_ids_exist_for_differentiable_ops_in_float32_and_float64_only() -> None:
    assert {MM, TANH, "unit/opinfo/mm/float64/backward-0"} <= LOCKED
    # eq has no differentiable output; float16 is not declared for gradients.
    assert not any(i.startswith("unit/opinfo/eq/") and "/backward-" in i for i in LOCKED)
    assert not any("/float16/backward-" in i for i in LOCKED)


def test_cpu_gradients_pass_and_a_wrong_or_unaccumulated_gradient_fails_by_name() -> None:
    case = unit_case(STANDARD, MM)
    evidence = execute_case("cpu", case)
    judge_case(STANDARD, case, evidence)
    result = evidence.result
    names = ["grad of args[0]", "grad of args[1]", "grad of args[0], accumulated twice",
             "grad of args[1], accumulated twice"]
    assert list(result) == names
    assert (result[names[3]] == 2 * result[names[1]]).all()

    wrong = {**result, "grad of args[1]": result["grad of args[1]"] * 1.01}
    with pytest.raises(NumericMismatch, match=r"grad of args\[1\]'"):
        judge_case(STANDARD, case, replace(evidence, result=wrong))
    # A device that overwrites .grad instead of adding to it.
    overwritten = {**result, names[2]: result[names[0]]}
    with pytest.raises(NumericMismatch, match="accumulated twice"):
        judge_case(STANDARD, case, replace(evidence, result=overwritten))


def test_inplace_backward_ids_exist_only_for_ops_with_an_inplace_variant() -> None:
    assert {MUL_INPLACE, SIGMOID_INPLACE} <= LOCKED
    assert not any(i.startswith("unit/opinfo/mm/") and "/inplacebackward-" in i for i in LOCKED)


def test_inplace_gradients_pass_on_cpu_and_a_version_counter_that_differs_fails() -> None:
    case = unit_case(STANDARD, MUL_INPLACE)
    evidence = execute_case("cpu", case)
    judge_case(STANDARD, case, evidence)
    facts, result = evidence.facts, evidence.result
    assert facts is not None
    assert list(facts.values()) == ["raises: saved tensor changed"]  # mul saves its inputs
    assert "grad of args[0]" in result and "grad of args[1]" in result
    # A device whose own autograd kernel for mul saves nothing autograd can check.
    forgetful = {name: "no error" for name in facts}
    with pytest.raises(SemanticMismatch, match="raises") as caught:
        judge_case(STANDARD, case, replace(evidence, facts=forgetful))
    assert caught.value.facts["failure"] == "version-counter"


# The backward of tanh is an op of its own on the device: its forward stays right. sigmoid's
# gradient reads its result: a wrong in-place kernel (sigmoid_) fails the gradients through it
# while the out-of-place op's gradients stay right.
FORWARD, SIBLING = "unit/opinfo/tanh/float32/0", "unit/opinfo/sigmoid/float32/backward-0"
plant([{"op": "aten::tanh_backward", "kind": "wrong_small"},
       {"op": "aten::sigmoid_", "kind": "wrong_small"}],
      [TANH, FORWARD, SIBLING, SIGMOID_INPLACE])


@pytest.mark.slow(seconds=90)
@pytest.mark.skipif(importlib.util.find_spec("simnpu") is None, reason="simnpu not installed")
def test_a_wrong_backward_kernel_fails_only_that_ops_gradients_on_simnpu(
    planted_run: dict[str, dict[str, Any]],
) -> None:
    records = planted_run
    for failing in (TANH, SIGMOID_INPLACE):
        assert records[failing]["status"] == "FAIL_NUMERIC", records[failing]["message"]
        assert "grad of args[0]" in records[failing]["message"]
    for control in (FORWARD, SIBLING):
        assert records[control]["status"] == "PASS", records[control]["message"]


def _with_backward(rule: dict[str, Any]) -> dict[str, Any]:
    return {
        "coverage": {"variants": {"backward": {"ops": ["tanh"], **rule}}},
        "ops": [{"op": "tanh", "dtypes": ["float32"]}],
    }


@pytest.mark.parametrize(("rule", "field"), [
    ({"widening": 0.5, "least_class": "compound", "exact_class": "reduction"}, "widening"),
    ({"widening": 4, "exact_class": "reduction"}, "least_class"),
    ({"widening": 4, "least_class": "compound", "exact_class": "exact"}, "exact_class"),
    ({"widening": 4, "least_class": "compound", "exact_class": "reduction", "samples": 3},
     "backward: unknown field 'samples'"),
])
def test_a_malformed_backward_rule_is_one_line_error_naming_the_field(
        rule: dict[str, Any], field: str) -> None:
    source = Path("/standards/v2/unit.yaml")
    with pytest.raises(InputError) as caught:
        parse_unit_config(_with_backward(rule), source)
    message = str(caught.value)
    assert "\n" not in message
    assert "coverage.variants.backward" in message and field in message, message
