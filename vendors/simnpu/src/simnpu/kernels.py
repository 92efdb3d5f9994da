"""simnpu's own kernels, with its own numerics; every other op runs the host (CPU) kernel.

The matrix unit accumulates in float32 over blocks of ``BLOCK_K`` along the reduction axis (even
for float16/bfloat16 inputs, cast back at the end), softmax is ``exp(x - max) / sum`` in float32,
and layer_norm takes a two-pass float32 variance. Results therefore differ from CPU at rounding
level while staying inside the kit's tolerances.

Each kernel first runs the op on meta tensors for the result dtype; when that rejects the
arguments, the host kernel runs instead so the caller sees CPU's own error message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils._pytree import tree_map

BLOCK_K = 32
NATIVE_DTYPES = frozenset({torch.float32, torch.float16, torch.bfloat16})

Kernel = Callable[[dict[str, Any]], Any]


def bind(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Map the call's arguments to their schema names, defaults filled in."""
    bound: dict[str, Any] = {}
    for index, argument in enumerate(func._schema.arguments):
        if index < len(args) and not argument.kwarg_only:
            bound[argument.name] = args[index]
        elif argument.name in kwargs:
            bound[argument.name] = kwargs[argument.name]
        elif argument.has_default_value():
            bound[argument.name] = argument.default_value
        else:
            bound[argument.name] = None
    return bound


def _meta(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device="meta")
    return value


def _validate(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return func(*tree_map(_meta, args), **tree_map(_meta, kwargs))


def _blocked_matmul(left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
    """``left @ right`` accumulated in float32, one ``BLOCK_K`` slice of K at a time."""
    a = left.float()
    b = right.float()
    depth = a.shape[-1]
    acc = torch.zeros((*a.shape[:-1], b.shape[-1]), dtype=torch.float32)
    for start in range(0, depth, BLOCK_K):
        stop = start + BLOCK_K
        acc += a[..., start:stop] @ b[..., start:stop, :]
    return acc


def _scaled_sum(
    bias: torch.Tensor, product: torch.Tensor, beta: float, alpha: float
) -> torch.Tensor:
    # beta == 0 ignores the bias entirely (NaN in it must not leak), as ATen documents.
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:
        return scaled
    return scaled + (bias.float() if beta == 1 else bias.float() * beta)


def mm(call: dict[str, Any]) -> torch.Tensor:
    return _blocked_matmul(call["self"], call["mat2"])


def addmm(call: dict[str, Any]) -> torch.Tensor:
    product = _blocked_matmul(call["mat1"], call["mat2"])
    return _scaled_sum(call["self"], product, call["beta"], call["alpha"])


def baddbmm(call: dict[str, Any]) -> torch.Tensor:
    product = _blocked_matmul(call["batch1"], call["batch2"])
    return _scaled_sum(call["self"], product, call["beta"], call["alpha"])


def softmax(call: dict[str, Any]) -> torch.Tensor:
    x = call["self"].float()
    dim = call["dim"]
    shifted = x - x.amax(dim, keepdim=True)
    exps = shifted.exp()
    return exps / exps.sum(dim, keepdim=True)


def layer_norm(call: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x = call["input"]
    axis = x.dim() - len(call["normalized_shape"])
    dims = tuple(range(axis, x.dim()))
    wide = x.float()
    mean = wide.mean(dims, keepdim=True)
    centered = wide - mean
    variance = (centered * centered).mean(dims, keepdim=True)  # second pass, on centered data
    rstd = torch.rsqrt(variance + call["eps"])
    out = centered * rstd
    if call["weight"] is not None:
        out = out * call["weight"].float()
    if call["bias"] is not None:
        out = out + call["bias"].float()
    # Like the CPU kernel, mean and rstd come back in the input dtype.
    return out.to(x.dtype), mean.to(x.dtype), rstd.to(x.dtype)


NATIVE: dict[str, tuple[Kernel, str]] = {
    # qualified overload -> (kernel, the argument whose dtype decides eligibility)
    "aten::mm": (mm, "self"),
    "aten::bmm": (mm, "self"),
    "aten::addmm": (addmm, "mat1"),
    "aten::baddbmm": (baddbmm, "batch1"),
    "aten::_softmax": (softmax, "self"),
    "aten::native_layer_norm": (layer_norm, "input"),
}


def qualified_name(func: Any) -> str:
    packet = func._schema.name
    overload = func._overloadname
    return packet if overload == "default" else f"{packet}.{overload}"


def _cast_like(result: Any, expected: Any) -> Any:
    """Single-output kernels compute in float32; hand back the dtype the op promises.

    Multi-output kernels (layer_norm) choose their own dtypes, as the CPU kernel does.
    """
    if isinstance(result, torch.Tensor) and result.dtype != expected.dtype:
        return result.to(expected.dtype)
    return result


def run(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Compute ``func`` on host tensors with simnpu's kernel where it has one."""
    from simnpu import recurrent

    recurrent_kernel = recurrent.KERNELS.get(qualified_name(func))
    if recurrent_kernel is not None:  # no host kernel to fall back on: CPU has none
        return recurrent_kernel(bind(func, args, kwargs))
    native = NATIVE.get(qualified_name(func))
    if native is None:
        return func(*args, **kwargs)
    kernel, deciding = native
    call = bind(func, args, kwargs)
    subject = call[deciding]
    if subject.dtype not in NATIVE_DTYPES or subject.numel() == 0:
        return func(*args, **kwargs)
    try:
        expected = _validate(func, args, kwargs)
    except RuntimeError:
        return func(*args, **kwargs)  # bad arguments: the host kernel raises its own error
    return _cast_like(kernel(call), expected)
