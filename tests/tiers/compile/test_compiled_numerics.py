"""A compiled result is judged under the standard's floor class (``numerics.compiled``): a
vector approximation of a math function, exact to a few eps of the function's scale, passes;
a wrong lowering still fails (standard v2's NUMERICS.md, "Compiled graphs")."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from kit.errors import InputError
from kit.numerics.parsing import parse_numerics
from kit.standard import load_standard
from kit.tiers.compile.cases import compiled_case
from kit.tiers.unit.cases import unit_case_called_once
from kit.tiers.unit.checking import UnitCase, case_bound

ERF = "compile/opinfo/erf/float32/0"
ARGMIN = "compile/opinfo/argmin/float32/0"
NUMERICS: dict[str, Any] = {
    "accumulation_dtypes": {"float32": "float32"},
    "default_class": "elementwise",
    "classes": {"exact": {"exact": True}, "elementwise": {"ulps": 4},
                "compound": {"ulps": 4, "normwise": 4}},
}


def abramowitz_stegun_erf(x: torch.Tensor) -> torch.Tensor:
    """erf by Abramowitz and Stegun 7.1.26 in float32, the form of ATen's vectorized erf that
    Inductor emits on the CPU: its 1.5e-7 error is absolute, so small results lose every digit."""
    t = 1.0 / (1.0 + 0.3275911 * x.abs())
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                                                                         + t * 1.061405429))))
    return torch.sign(x) * (1.0 - poly * torch.exp(-x * x))


def judged(case: UnitCase, compute: Any) -> bool:
    """Whether ``compute`` of the case's float32 inputs passes the case's bound."""
    standard = load_standard("v2")
    inputs = case.make_inputs("cpu", False)
    reference = case.call("cpu", True, case.make_inputs("cpu", True))
    bound = case_bound(standard, case, case.make_inputs("cpu", True), reference.numel())
    return bound.judge(compute(inputs), reference).passed


def test_v2_floors_compiled_results_at_compound() -> None:
    assert load_standard("v2").numerics.compiled_least_class == "compound"


def test_an_absolute_erf_approximation_fails_eager_and_passes_compiled() -> None:
    standard = load_standard("v2")
    eager = unit_case_called_once(standard, "unit/opinfo/erf/float32/0")
    compiled = compiled_case(standard, ERF)
    approximated = lambda inputs: abramowitz_stegun_erf(inputs[0][0])  # noqa: E731
    assert not judged(eager, approximated)
    assert judged(compiled, approximated)
    # A wrong lowering (erf of an input 0.1% off) fails compiled too.
    assert not judged(compiled, lambda inputs: torch.erf(inputs[0][0] * (1 + 1e-3)))


def test_the_floor_is_recorded_and_data_movement_stays_exact() -> None:
    standard = load_standard("v2")
    case = compiled_case(standard, ERF)
    inputs = case.make_inputs("cpu", True)
    described = case_bound(standard, case, inputs, 1).describe("float32")
    assert (described["class"], described["normwise"], described["least_class"]) == (
        "elementwise", 4.0, "compound")
    assert compiled_case(standard, ARGMIN).comparison.widening is None


@pytest.mark.parametrize(("least", "problem"), [
    ("exact", "numerics.compiled.least_class: expected one of compound, elementwise, got .exact."),
    ("fused", "numerics.compiled.least_class: expected one of compound, elementwise, got .fused."),
])
def test_a_compiled_floor_naming_no_inexact_class_is_refused(least: str, problem: str) -> None:
    with pytest.raises(InputError, match=problem):
        parse_numerics({**NUMERICS, "compiled": {"least_class": least}}, "numerics")
