"""The re-run is judged by its flow's criterion: a tolerance, or a signal-to-noise floor."""

from __future__ import annotations

import torch

from kit.golden_check.criteria import FALLBACK_FLOAT, FALLBACK_QUANTIZED, criterion_of, mismatch
from kit.numerics.criteria import SqnrFloor, Tolerance

STORED = (torch.linspace(-1.0, 1.0, 64).reshape(8, 8), torch.arange(8))


def test_quantized_flow_is_judged_by_signal_to_noise() -> None:
    assert isinstance(criterion_of("executorch_xnnpack_int8"), SqnrFloor)
    assert isinstance(criterion_of("executorch_xnnpack"), Tolerance)


def test_an_unknown_flow_gets_the_float_bound() -> None:
    assert criterion_of("some_vendor_flow") == FALLBACK_FLOAT


def test_quantization_noise_passes_the_floor_and_a_wrong_scale_fails() -> None:
    step = 2.0 / 255
    quantized = (torch.round(STORED[0] / step) * step, STORED[1])
    assert mismatch(quantized, STORED, FALLBACK_QUANTIZED) is None
    assert mismatch(quantized, STORED, FALLBACK_FLOAT) is not None
    wrong_scale = (STORED[0] * 1.5, STORED[1])
    problem = mismatch(wrong_scale, STORED, FALLBACK_QUANTIZED)
    assert problem == "outputs are 6.0 dB above their error, below the floor of 20.0 dB"


def test_integer_outputs_must_be_equal_under_any_criterion() -> None:
    off_by_one = (STORED[0], STORED[1] + (torch.arange(8) == 3))
    for criterion in (FALLBACK_FLOAT, FALLBACK_QUANTIZED):
        problem = mismatch(off_by_one, STORED, criterion)
        assert problem is not None
        assert problem.startswith("1/8 elements outside the bound in output[1]: max abs err 1,")
        assert "of int64, infx the bound" in problem


def test_missing_output_fails() -> None:
    assert mismatch(STORED[:1], STORED, FALLBACK_FLOAT) == (
        "the program gives 1 outputs, 2 are stored"
    )
