"""Walking the nested inputs and outputs of an op call: tensors inside lists, tuples and dicts."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch

from kit.numerics.comparison import assert_same_dtype
from kit.outcomes import ResultMismatch

#: The unit tier's dtype names.
TORCH_DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "int64": torch.int64,
    "int32": torch.int32,
    "bool": torch.bool,
}
FLOATING_TO_UPCAST = frozenset({torch.float16, torch.bfloat16, torch.float32})


def map_tensors(value: Any, fn: Callable[[torch.Tensor], Any]) -> Any:
    """``value`` with every tensor leaf replaced by ``fn(tensor)``; namedtuples keep their type."""
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(map_tensors(v, fn) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(map_tensors(v, fn) for v in value)
    if isinstance(value, Mapping):
        return {key: map_tensors(v, fn) for key, v in value.items()}
    return value


def to_device(value: Any, device: str) -> Any:
    """A copy of every tensor on ``device``: always a copy, so an op that writes into its input
    cannot change the sample the reference was computed from."""
    return map_tensors(value, lambda t: t.detach().to(device, copy=True))


def to_cpu(value: Any) -> Any:
    return map_tensors(value, lambda t: t.detach().cpu())


def clone(value: Any) -> Any:
    return map_tensors(value, lambda t: t.detach().clone())


def tensor_leaves(value: Any, where: str = "") -> Iterator[tuple[str, torch.Tensor]]:
    """Every tensor in ``value`` with where it sits. A case's ``(positional, keyword)`` inputs
    read ``args[0]``, ``args[1][2]``, ``kwargs['weight']``."""
    if not where and _is_call_arguments(value):
        yield from tensor_leaves(value[0], "args")
        yield from tensor_leaves(value[1], "kwargs")
    elif isinstance(value, torch.Tensor):
        yield where, value
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from tensor_leaves(item, f"{where}[{index}]")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from tensor_leaves(item, f"{where}[{key!r}]")


def _is_call_arguments(value: Any) -> bool:
    return (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], (list, tuple))
        and isinstance(value[1], Mapping)
    )


def numel_of(value: Any) -> int:
    """The element count of the largest tensor in ``value`` (at least 1)."""
    return max((t.numel() for _, t in tensor_leaves(value)), default=1) or 1


def upcast_floating(value: Any) -> Any:
    """Float16/bfloat16/float32 tensors as float64 (exactly: widening loses nothing)."""
    return map_tensors(
        value, lambda t: t.to(torch.float64) if t.dtype in FLOATING_TO_UPCAST else t.clone()
    )


def assert_same_dtypes(actual: Any, expected: Any, where: str = "output") -> None:
    """Every tensor of ``actual`` has the dtype of the tensor at the same place in ``expected``.

    Structure differences are left to the criterion's judgement (``kit.numerics.judging``),
    which names them better.
    """
    if isinstance(expected, torch.Tensor):
        if isinstance(actual, torch.Tensor):
            assert_same_dtype(actual, expected.dtype, where)
        return
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        for index, (a, e) in enumerate(zip(actual, expected, strict=False)):
            assert_same_dtypes(a, e, f"{where}[{index}]")
    elif isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key in expected:
            if key in actual:
                assert_same_dtypes(actual[key], expected[key], f"{where}[{key!r}]")


def select_outputs(value: Any, indices: tuple[int, ...] | None) -> Any:
    """The compared part of a result: the listed elements of a tuple result, else all of it."""
    if indices is None or not isinstance(value, (list, tuple)):
        return value
    try:
        return tuple(value[i] for i in indices)
    except IndexError:
        raise ResultMismatch(
            f"output: expected at least {max(indices) + 1} results, got {len(value)}"
        ) from None
