"""Standard v2's cancellation-aware bound for normalizations (``centred`` op classes).

A correct kernel that takes the mean off terms as large as ``|x| * r * |weight|`` (CPU's fused
``x * a + (bias - mean * a)``) cancels below the result's own scale where the input sits far
from zero: v1's bound fails it, v2's passes it; TF32-class error in a normalization still fails.
"""

from __future__ import annotations

from typing import Any

import torch

from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.centring import uncentred_magnitude
from kit.tiers.unit.checking import case_bound, compared_part, cpu_references

ONE_ELEMENT = "unit/opinfo/nn.functional.layer_norm/float64/2"  # the output is the bias exactly
FLOAT32 = "unit/opinfo/nn.functional.layer_norm/float32/1"


def _fused_layer_norm(inputs: Any) -> torch.Tensor:
    """Layer norm as ``x * a + (bias - mean * a)``, ``a = weight / sqrt(var + eps)``."""
    (x, shape, weight, bias), kwargs = inputs
    dims = tuple(range(x.dim() - len(shape), x.dim()))
    var, mean = torch.var_mean(x, dim=dims, correction=0, keepdim=True)
    scale = torch.rsqrt(var + kwargs.get("eps", 1e-5)) * weight
    return x * scale + (bias - mean * scale)


def _judged(version: str, test_id: str, result: torch.Tensor) -> float:
    """The ratio to the bound of ``result`` under standard ``version``; > 1 fails."""
    standard = load_standard(version)
    case = unit_case(standard, test_id)
    reference = compared_part(cpu_references(case).reference, case.comparison)
    bound = case_bound(standard, case, case.make_inputs("cpu", False), result.numel())
    return bound.judge(result, reference).measurements[0].ratio


def test_the_fused_form_cancels_outside_v1s_bound_and_inside_v2s() -> None:
    case = unit_case(load_standard("v2"), ONE_ELEMENT)
    inputs = case.make_inputs("cpu", False)
    fused = _fused_layer_norm(inputs)
    assert fused.item() != inputs[0][3].item()  # cancellation left a residue on the bias
    assert _judged("v1", ONE_ELEMENT, fused) > 1
    assert _judged("v2", ONE_ELEMENT, fused) < 1
    assert uncentred_magnitude(case.op, case.make_inputs("cpu", True)) > abs(fused.item())


def test_tf32_class_error_in_a_normalization_still_fails_under_v2() -> None:
    case = unit_case(load_standard("v2"), FLOAT32)
    reference = compared_part(cpu_references(case).reference, case.comparison)
    assert isinstance(reference, torch.Tensor)
    # TF32 keeps 10 mantissa bits: a relative error of 2^-11 on every element.
    tf32_like = (reference * (1 + 2.0**-11)).to(torch.float32)
    assert _judged("v2", FLOAT32, tf32_like) > 1
    assert _judged("v2", FLOAT32, reference.to(torch.float32)) < 1
