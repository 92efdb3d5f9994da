"""The numerics model still rejects the precision losses it exists to catch.

Each test emulates a real kind of imprecise kernel on CPU, exactly, and judges its results
with the standard's own rules (``kit.tiers.unit.checking``'s bound), on the standard's own test
cases:

- TF32 matrix products: inputs rounded to TF32's 10-bit mantissa (what NVIDIA tensor cores do
  when TF32 is forced), products and sums exact; error ~1e-3 relative once K >= 64;
- float16 sums accumulated in float16: every partial sum rounded to float16.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch

from kit.numerics.accumulation import accumulation_length
from kit.numerics.comparison import measure_all
from kit.outcomes import worst_of
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.checking import UnitCase, case_bound
from kit.tiers.unit.trees import map_tensors, to_cpu

pytest.importorskip("torch.testing._internal.common_methods_invocations")

STANDARD = load_standard()
MATMUL_FAMILY = (
    "mm", "bmm", "matmul", "addmm", "baddbmm", "einsum", "nn.functional.linear",
    "matmul_layouts", "bmm_transposed",
)
#: TF32 error becomes ~1e-3 relative from this contraction length on.
TF32_MIN_LENGTH = 64


def _op_of(test_id: str) -> str:
    return test_id.split("/")[2]


def _round_to_tf32(tensor: torch.Tensor) -> torch.Tensor:
    """Round float32 values to TF32 (10 explicit mantissa bits), to nearest even."""
    if tensor.dtype != torch.float32:
        return tensor
    bits = tensor.contiguous().view(torch.int32)
    lsb = (bits >> 13) & 1
    rounded = ((bits + 0x0FFF + lsb) & ~0x1FFF).view(torch.float32)
    return rounded.reshape(tensor.shape)


def _judge(case: UnitCase, actual: Any) -> tuple[bool, float]:
    reference = to_cpu(case.call("cpu", True, case.make_inputs("cpu", True)))
    bound = case_bound(STANDARD, case, case.make_inputs("cpu", False), actual.numel())
    worst = worst_of(measure_all(actual, reference, bound))
    assert worst is not None
    return worst.mismatched > 0, worst.ratio


def _tf32_result(case: UnitCase) -> torch.Tensor:
    inputs = map_tensors(case.make_inputs("cpu", False), _round_to_tf32)
    wide = map_tensors(inputs, lambda t: t.double() if t.is_floating_point() else t)
    result = case.call("cpu", True, wide)
    assert isinstance(result, torch.Tensor)
    return result.to(torch.float32)


def _tf32_cases() -> list[str]:
    ids = [
        test_id
        for test_id in STANDARD.test_ids("unit")
        if _op_of(test_id) in MATMUL_FAMILY and test_id.split("/")[3] == "float32"
    ]
    long_ones = []
    for test_id in ids:
        case = unit_case(STANDARD, test_id)
        if case.extra_operands:
            continue  # a module's own parameters cannot be rounded from outside
        inputs = case.make_inputs("cpu", False)
        if accumulation_length(inputs, 1) >= TF32_MIN_LENGTH and _contracts_long(inputs):
            long_ones.append(test_id)
    return long_ones


def _contracts_long(inputs: Any) -> bool:
    # The contracted dim is the last of the first matrix operand in every case of the family.
    shapes = [t.shape for t in _tensors(inputs) if t.dim() >= 2]
    return bool(shapes) and shapes[0][-1] >= TF32_MIN_LENGTH


def _tensors(value: Any) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    map_tensors(value, lambda t: found.append(t))
    return found


TF32_CASES = _tf32_cases()


def test_there_are_long_float32_contractions_to_judge() -> None:
    assert len(TF32_CASES) >= 5, TF32_CASES


@pytest.mark.parametrize("test_id", TF32_CASES)
def test_tf32_matrix_products_fail(test_id: str) -> None:
    case = unit_case(STANDARD, test_id)
    failed, ratio = _judge(case, _tf32_result(case))
    assert failed, f"TF32 result within the bound ({ratio:.3g}x)"


@pytest.mark.parametrize(
    "test_id",
    [i for i in STANDARD.test_ids("unit") if i.startswith("unit/opspec/sum_large/float16/big")],
)
def test_float16_sums_accumulated_in_float16_fail(test_id: str) -> None:
    case = unit_case(STANDARD, test_id)
    (values,), _ = case.make_inputs("cpu", False)
    dim = int(re.search(r"-dim(-?\d+)-", test_id).group(1))  # type: ignore[union-attr]
    rows = values.movedim(dim, 0)
    total = torch.zeros(rows.shape[1:], dtype=torch.float16)
    for row in rows:
        total = total + row  # rounded to float16 after every addition
    failed, ratio = _judge(case, total)
    assert failed, f"float16 accumulation within the bound ({ratio:.3g}x)"


def test_correct_float32_products_pass() -> None:
    """The control: the same cases computed exactly (float64, rounded once) pass."""
    for test_id in TF32_CASES:
        case = unit_case(STANDARD, test_id)
        exact = case.call("cpu", True, case.make_inputs("cpu", True)).to(torch.float32)
        failed, ratio = _judge(case, exact)
        assert not failed, f"{test_id}: {ratio:.3g}x"
