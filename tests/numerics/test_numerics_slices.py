"""A result larger than one slice (``SLICE_ELEMENTS``) is measured slice by slice, in cache: the
measurement must be the one the whole tensor gets at once, whatever NaN, infinities, mismatches
and bound (the error model's scale and a tolerance's norm are the whole result's)."""

from __future__ import annotations

import pytest
import torch

from kit.numerics import comparison
from kit.numerics.comparison import Bound, measure
from kit.numerics.criteria import ErrorBound, Tolerance
from kit.standard import load_standard

RULES = load_standard().numerics
ELEMENTS = 3 * comparison.SLICE_ELEMENTS + 5
BOUNDS: dict[str, Bound] = {
    "error-model": ErrorBound(RULES, "reduction", {}, length=64),
    "normwise-tolerance": Tolerance(atol=1e-6, rtol=1e-4, normwise=1e-3),
    "integers-exact": Tolerance(atol=0.0, rtol=0.0),
}


def _pair(seed: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    expected = torch.randn(ELEMENTS, generator=generator, dtype=torch.float64) * 100
    actual = expected + torch.randn(ELEMENTS, generator=generator, dtype=torch.float64) * 1e-3
    # The largest |expected| sits in the last slice only: a slice's own scale would be wrong.
    expected[-2] = 1e6
    actual[-2] = 1e6
    for tensor, where in ((actual, 7), (expected, 11), (actual, ELEMENTS - 3)):
        tensor[where] = float("nan")
    actual[comparison.SLICE_ELEMENTS + 1] = float("inf")
    expected[comparison.SLICE_ELEMENTS + 1] = float("inf")
    actual[2 * comparison.SLICE_ELEMENTS] = float("-inf")
    if not dtype.is_floating_point:
        actual, expected = (t.nan_to_num(0.0, 0.0, 0.0).round() for t in (actual, expected))
        actual[5] += 1  # one integer mismatch
    return actual.to(dtype), expected


@pytest.mark.parametrize("bound_name", sorted(BOUNDS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_slices_measure_what_the_whole_tensor_measures(
    monkeypatch: pytest.MonkeyPatch, bound_name: str, dtype: torch.dtype
) -> None:
    bound = BOUNDS[bound_name]
    actual, expected = _pair(len(bound_name), dtype)
    sliced = measure(actual, expected, bound, "output")
    monkeypatch.setattr(comparison, "SLICE_ELEMENTS", ELEMENTS)
    whole = measure(actual, expected, bound, "output")
    assert sliced == whole
    assert sliced.mismatched > 0  # the planted NaN, infinity and integer change count


def test_a_clean_sliced_result_passes_with_its_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = torch.linspace(-1e3, 1e3, ELEMENTS, dtype=torch.float64)
    actual = expected.to(torch.float32)
    bound = BOUNDS["error-model"]
    sliced = measure(actual, expected, bound, "output")
    monkeypatch.setattr(comparison, "SLICE_ELEMENTS", ELEMENTS)
    assert sliced == measure(actual, expected, bound, "output")
    assert sliced.mismatched == 0 and 0 < sliced.ratio <= 1
