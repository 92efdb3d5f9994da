"""Standard v2's second-order and forward-mode derivatives: ``gradgrad-<n>`` back-propagates a
seeded vector through an op's first-order gradients (to its inputs and its ``grad_outputs``),
``forwardad-<n>`` calls the op on dual tensors; each is judged against CPU's float64 ones."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from typing import Any

import pytest
import torch
from unit_helpers import plant

from kit.outcomes import NumericMismatch
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.checking import execute_case, judge_case
from kit.tiers.unit.variants.gradgrad import second_order

STANDARD = load_standard()
LOCKED = set(STANDARD.test_ids("unit"))
TANH_GRADGRAD = "unit/opinfo/tanh/float32/gradgrad-0"
MM_FORWARDAD = "unit/opinfo/mm/float32/forwardad-0"
SECOND = ["second-order grad of args[0]", "second-order grad of grad_outputs[0]"]


def test_ids_exist_in_float32_and_float64_only_where_opinfo_declares_the_derivative() -> None:
    assert {TANH_GRADGRAD, MM_FORWARDAD, "unit/opinfo/tanh/float64/gradgrad-0",
            "unit/opinfo/mm/float64/forwardad-0"} <= LOCKED
    assert not any("/float16/gradgrad-" in i or "/bfloat16/forwardad-" in i for i in LOCKED)
    # eq has no differentiable output; floor's gradient is zero, so its every second-order
    # gradient is too (no test a zero result would pass).
    assert not any(i.startswith(("unit/opinfo/eq/", "unit/opinfo/floor/"))
                   and ("/gradgrad-" in i or "/forwardad-" in i) for i in LOCKED)


def test_cpu_second_order_gradients_pass_and_a_wrong_or_zero_one_fails_by_name() -> None:
    case = unit_case(STANDARD, TANH_GRADGRAD)
    evidence = execute_case("cpu", case)
    judge_case(STANDARD, case, evidence)
    result = evidence.result
    assert list(result) == SECOND
    wrong = {**result, SECOND[1]: result[SECOND[1]] * 1.01}
    with pytest.raises(NumericMismatch, match=r"grad_outputs\[0\]'"):
        judge_case(STANDARD, case, replace(evidence, result=wrong))
    # A device whose double backward loses the graph: every second-order gradient zero.
    flat = {name: torch.zeros_like(value) for name, value in result.items()}
    with pytest.raises(NumericMismatch, match="second-order grad of"):
        judge_case(STANDARD, case, replace(evidence, result=flat))


def test_second_order_of_a_linear_call_is_zero_for_inputs_and_the_vector_for_grad_outputs(
) -> None:
    inputs = ([torch.tensor([1.0, -2.0])], {})
    vector = torch.tensor([0.5, 3.0])
    got = second_order(lambda attached: attached[0][0] * 2, inputs, [torch.ones(2)], [vector],
                       ())
    assert got[SECOND[0]].eq(0).all()
    assert got[SECOND[1]].equal(vector * 2)  # d<2 * g, v>/dg


def test_cpu_tangents_pass_and_a_wrong_tangent_or_primal_fails_by_name() -> None:
    case = unit_case(STANDARD, MM_FORWARDAD)
    evidence = execute_case("cpu", case)
    judge_case(STANDARD, case, evidence)
    result = evidence.result
    assert list(result) == ["output", "tangent of output"]
    for name in result:
        wrong = {**result, name: result[name] * 1.01}
        with pytest.raises(NumericMismatch, match=f"'{name}'"):
            judge_case(STANDARD, case, replace(evidence, result=wrong))


# silu's double backward calls sigmoid_backward, which neither its forward nor its backward
# calls; max_pool2d's tangent is gathered by the forward's indices, a gather that neither its
# forward nor its backward calls. float64 only: the shared run's other tests stay clear.
SILU = "unit/opinfo/nn.functional.silu/float64"
MAX_POOL = "unit/opinfo/nn.functional.max_pool2d/float64"
CAUGHT = {f"{SILU}/gradgrad-0": "second-order grad of args[0]",
          f"{MAX_POOL}/forwardad-899": "tangent of output"}
CONTROLS = [f"{SILU}/0", f"{SILU}/backward-0", f"{SILU}/forwardad-0", f"{MAX_POOL}/899",
            f"{MAX_POOL}/backward-899"]
plant([{"op": "aten::sigmoid_backward", "kind": "wrong_small", "dtype": "float64"},
       {"op": "aten::gather", "kind": "wrong_small", "dtype": "float64"}],
      [*CAUGHT, *CONTROLS])


@pytest.mark.slow(seconds=90)
@pytest.mark.skipif(importlib.util.find_spec("simnpu") is None, reason="simnpu not installed")
def test_a_kernel_only_a_derivative_calls_fails_only_that_derivative_on_simnpu(
    planted_run: dict[str, dict[str, Any]],
) -> None:
    records = planted_run
    for failing, output in CAUGHT.items():
        assert records[failing]["status"] == "FAIL_NUMERIC", records[failing]["message"]
        assert output in records[failing]["message"]
    for control in CONTROLS:
        assert records[control]["status"] == "PASS", records[control]["message"]
