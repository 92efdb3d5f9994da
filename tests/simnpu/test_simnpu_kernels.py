"""simnpu's own kernels: not CPU's bits, but inside the standard's bound against float64."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import simnpu  # noqa: F401  (registers the device)
import torch

from kit.numerics.accumulation import accumulation_length
from kit.numerics.judging import assert_close
from kit.tiers.unit.checking import unit_bound

DEVICE = "simnpu"
FLOATS = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

Case = Callable[[dict[str, torch.Tensor]], torch.Tensor]

# Sizes chosen so the reduction axis spans several of simnpu's 32-wide accumulation blocks.
CASES: dict[str, Case] = {
    "mm": lambda t: t["a"] @ t["b"],
    "addmm": lambda t: torch.addmm(t["bias"], t["a"], t["b"], beta=0.5, alpha=2.0),
    "bmm": lambda t: torch.bmm(t["a"].view(2, 8, 256), t["b"].expand(2, 256, 24)),
    "baddbmm": lambda t: torch.baddbmm(
        t["bias"].expand(2, 8, 24), t["a"].view(2, 8, 256), t["b"].expand(2, 256, 24)
    ),
    "softmax": lambda t: torch.softmax(t["x"], -1),
    "layer_norm": lambda t: torch.nn.functional.layer_norm(t["x"], (64,), t["w"], t["wb"]),
}
#: Each case's op class in standard v1's numerics model (as unit.yaml declares the op).
OP_CLASSES = {
    "mm": "reduction",
    "addmm": "composite",
    "bmm": "reduction",
    "baddbmm": "composite",
    "softmax": "composite",
    "layer_norm": "composite",
}


def _inputs(dtype: torch.dtype) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    shapes = {"a": (16, 256), "b": (256, 24), "bias": (24,), "x": (8, 64), "w": (64,), "wb": (64,)}
    tensors = {name: torch.randn(shape, generator=generator) for name, shape in shapes.items()}
    tensors["x"] = tensors["x"] * 4  # a wider softmax range
    return {name: t.to(dtype) for name, t in tensors.items()}


def _on(device: str, tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {name: t.to(device) for name, t in tensors.items()}


@pytest.mark.parametrize("dtype_name", FLOATS)
@pytest.mark.parametrize("case", CASES)
def test_native_kernel_is_within_tolerance_of_float64(case: str, dtype_name: str) -> None:
    dtype = FLOATS[dtype_name]
    inputs = _inputs(dtype)
    on_device = CASES[case](_on(DEVICE, inputs))
    reference = CASES[case]({name: t.double() for name, t in inputs.items()})
    assert on_device.device.type == DEVICE
    assert on_device.dtype == dtype
    length = accumulation_length(inputs, on_device.numel())
    assert_close(on_device.cpu(), reference, unit_bound(OP_CLASSES[case], length))


@pytest.mark.parametrize("case", CASES)
def test_native_float32_kernel_differs_from_cpu_bitwise(case: str) -> None:
    inputs = _inputs(torch.float32)
    on_cpu = CASES[case](inputs)
    on_device = CASES[case](_on(DEVICE, inputs)).cpu()
    assert not torch.equal(on_cpu, on_device)


def test_half_precision_matmul_accumulates_in_float32() -> None:
    # 4096 ones: a float16 accumulator would stall at 2048; simnpu's float32 one does not.
    ones = torch.ones(1, 4096, dtype=torch.float16)
    result = (ones.to(DEVICE) @ ones.t().to(DEVICE)).cpu()
    assert result.dtype == torch.float16
    assert result.item() == 4096.0


def test_softmax_half_to_float_returns_float32() -> None:
    x = torch.randn(3, 5, dtype=torch.float16)
    out = torch.ops.aten._softmax(x.to(DEVICE), -1, True)
    assert out.dtype == torch.float32
    assert_close(out.cpu(), torch.softmax(x.double(), -1), unit_bound("composite", 5))


def test_layer_norm_returns_mean_and_rstd_like_cpu() -> None:
    x = torch.randn(2, 3, 8, dtype=torch.bfloat16)
    out, mean, rstd = torch.ops.aten.native_layer_norm(x.to(DEVICE), [8], None, None, 1e-5)
    cpu_out, cpu_mean, cpu_rstd = torch.ops.aten.native_layer_norm(x, [8], None, None, 1e-5)
    assert (out.dtype, mean.dtype, rstd.dtype) == (cpu_out.dtype, cpu_mean.dtype, cpu_rstd.dtype)
    assert (mean.shape, rstd.shape) == (cpu_mean.shape, cpu_rstd.shape)


def test_kernels_raise_the_errors_cpu_raises() -> None:
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.ones(2, 3, device=DEVICE) @ torch.ones(4, 5, device=DEVICE)


def test_empty_reductions_fall_back_to_the_host_kernel() -> None:
    empty = torch.ones(3, 0, device=DEVICE) @ torch.ones(0, 2, device=DEVICE)
    assert torch.equal(empty.cpu(), torch.zeros(3, 2))
