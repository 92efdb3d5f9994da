"""The magnitude reference (classes marked ``magnitude``: losses) and accumulation overrides.

A loss is a mean of terms rounded in the output dtype; when the mean cancels far below its
terms, the bound is scaled by the terms' size (the op run on ``|inputs|``), not the result.
"""

from __future__ import annotations

import torch

from kit.numerics.comparison import measure_all
from kit.numerics.criteria import ErrorBound
from kit.numerics.model import Override
from kit.outcomes import worst_of
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.checking import case_bound, magnitude_reference

STANDARD = load_standard()
RULES = STANDARD.numerics
#: A float16 cross entropy whose weighted mean (0.0577) cancels far below its terms (~1).
CANCELLING_LOSS = "unit/opinfo/nn.functional.cross_entropy/float16/14"


def _largest_allowed(bound: ErrorBound, reference: torch.Tensor) -> float:
    allowed = bound.allowed(reference, torch.float16)
    return float(allowed.max())


def test_loss_bound_is_scaled_by_the_terms_not_the_cancelled_result() -> None:
    reference = torch.tensor([0.0577], dtype=torch.float64)
    plain = ErrorBound(RULES, "loss", {}, length=6)
    with_terms = ErrorBound(RULES, "loss", {}, length=6, magnitude=2.0)
    assert _largest_allowed(with_terms, reference) > 10 * _largest_allowed(plain, reference)


def test_classes_without_magnitude_ignore_it() -> None:
    reference = torch.tensor([0.0577], dtype=torch.float64)
    plain = ErrorBound(RULES, "composite", {}, length=6)
    with_terms = ErrorBound(RULES, "composite", {}, length=6, magnitude=2.0)
    assert _largest_allowed(with_terms, reference) == _largest_allowed(plain, reference)


def test_magnitude_reference_is_the_op_on_absolute_inputs() -> None:
    case = unit_case(STANDARD, CANCELLING_LOSS)
    (logits, target), kwargs = case.make_inputs("cpu", True)
    weight = kwargs.pop("weight").abs()
    expected = torch.nn.functional.cross_entropy(logits.abs(), target, weight=weight, **kwargs)
    assert magnitude_reference(case) == float(expected.abs())


def test_cancelling_loss_judged_against_its_terms_still_fails_a_wrong_result() -> None:
    case = unit_case(STANDARD, CANCELLING_LOSS)
    reference = case.call("cpu", True, case.make_inputs("cpu", True))
    bound = case_bound(STANDARD, case, case.make_inputs("cpu", False), 1)
    honest = case.call("cpu", False, case.make_inputs("cpu", False))
    assert not worst_of(measure_all(honest, reference, bound)).mismatched  # type: ignore[union-attr]
    for wrong in (torch.zeros_like(honest), honest * 1.5):
        assert worst_of(measure_all(wrong, reference, bound)).mismatched  # type: ignore[union-attr]


def test_accumulation_dtype_override_widens_only_the_accumulation_term() -> None:
    reference = torch.tensor([0.5, -0.25], dtype=torch.float64)
    override = {"bfloat16": Override({}, "sums in bfloat16", accumulation_dtype="bfloat16")}
    float32_sums = ErrorBound(RULES, "reduction", {}, length=16)
    bfloat16_sums = ErrorBound(RULES, "reduction", override, length=16)
    widened = bfloat16_sums.allowed(reference, torch.bfloat16)
    assert bool((widened > float32_sums.allowed(reference, torch.bfloat16)).all())
    assert bfloat16_sums.describe("bfloat16")["accumulation_dtype"] == "bfloat16"
    assert torch.equal(
        bfloat16_sums.allowed(reference, torch.float32),
        float32_sums.allowed(reference, torch.float32),
    )
