"""A device that computes a model wrongly is caught: each test plays one such device on the CPU."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from models_helpers import cpu_context

from kit.outcomes import NumericMismatch, ResultMismatch
from kit.tiers.models.cases import SOURCES, ModelCase, find_case
from kit.tiers.models.flows import check_eager, compare_outputs, eager_output, reference_output
from kit.tiers.models.interface import BuiltModel


@pytest.fixture(scope="module")
def llama() -> ModelCase:
    return find_case(cpu_context().standard, "models/hf/llama/eager")


def _build(case: ModelCase) -> BuiltModel:
    return SOURCES[case.source].build(case)


def test_models_honest_cpu_passes(llama: ModelCase) -> None:
    check_eager(_build(llama), llama, "cpu")


def test_models_bfloat16_matmuls_fail_numeric(llama: ModelCase) -> None:
    built = _build(llama)
    expected = reference_output(built, llama)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        actual = eager_output(built, llama, "cpu").float()
    with pytest.raises(NumericMismatch) as mismatch:
        compare_outputs(actual, expected, llama)
    assert mismatch.value.max_abs_err > llama.tolerance.atol
    assert mismatch.value.numel == expected.numel()


def test_models_ignored_attention_mask_fails_numeric(llama: ModelCase) -> None:
    built = _build(llama)
    expected = reference_output(built, llama)
    assert isinstance(built.inputs, dict)
    unmasked = dict(built.inputs)
    unmasked["attention_mask"] = torch.ones_like(unmasked["attention_mask"])
    actual = eager_output(BuiltModel(built.module, unmasked), llama, "cpu")
    with pytest.raises(NumericMismatch, match="in logits"):
        compare_outputs(actual, expected, llama)


def test_models_silent_half_precision_result_is_a_mismatch(llama: ModelCase) -> None:
    built = _build(llama)
    expected = reference_output(built, llama)
    actual = eager_output(built, llama, "cpu").half()
    with pytest.raises(ResultMismatch, match="dtype changed"):
        compare_outputs(actual, expected, llama)


def test_models_truncated_sequence_is_a_mismatch(llama: ModelCase) -> None:
    built = _build(llama)
    expected = reference_output(built, llama)
    actual = eager_output(built, llama, "cpu")[:, :-1]
    with pytest.raises(ResultMismatch, match="shape"):
        compare_outputs(actual, expected, llama)


def test_models_tolerance_is_not_vacuous(llama: ModelCase) -> None:
    """A zero tolerance fails even the honest CPU: the float64 reference really is different."""
    built = _build(llama)
    expected = reference_output(built, llama)
    actual = eager_output(built, llama, "cpu")
    exact = dataclasses.replace(llama, tolerance=dataclasses.replace(llama.tolerance, atol=0.0,
                                                                        rtol=0.0))
    with pytest.raises(NumericMismatch):
        compare_outputs(actual, expected, exact)
    compare_outputs(actual, expected, llama)
