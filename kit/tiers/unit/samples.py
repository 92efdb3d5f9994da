"""OpInfo samples on CPU, and the unit case that runs one of them on any device.

``torch.testing._internal.common_methods_invocations.op_db`` takes seconds to import, so it is
imported only when a case runs or the test list is generated, never at collection. An op's
samples in a dtype are generated on CPU under a seed derived from (op, dtype), so every process
sees the same sample at the same position; they are cached because a worker runs many cases of
one op.
"""

from __future__ import annotations

import functools
import inspect
import warnings
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import torch

from kit.errors import InputError
from kit.tiers.unit.checking import WIDENED_DTYPES, UnitCase
from kit.tiers.unit.entries import FLOAT64_REFERENCE, OpEntry
from kit.tiers.unit.seeding import seeded_rngs
from kit.tiers.unit.trees import (
    FLOATING_TO_UPCAST,
    TORCH_DTYPES,
    map_tensors,
    tensor_leaves,
    to_device,
    upcast_floating,
)


@functools.cache
def _op_db_index() -> Mapping[tuple[str, str], Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {(op.name, op.variant_test_name): op for op in op_db}


def find_opinfo(entry: OpEntry) -> Any:
    return _find(entry.name, entry.variant)


def _find(name: str, variant: str) -> Any:
    op = _op_db_index().get((name, variant))
    if op is None:
        which = f"{name!r} (variant {variant!r})" if variant else repr(name)
        raise InputError(f"unit tier: no OpInfo named {which} in torch {torch.__version__}")
    return op


def seed_of(*parts: str) -> int:
    """A seed from names: the same in every process (``hash`` is salted per process)."""
    return zlib.crc32("/".join(parts).encode())


def opinfo_samples(entry: OpEntry, dtype: str) -> tuple[Any, ...]:
    """Every OpInfo CPU sample of the op in ``dtype``, in OpInfo's order (ids index into it)."""
    return _samples(entry.name, entry.variant, dtype)


@functools.cache
def _samples(name: str, variant: str, dtype: str) -> tuple[Any, ...]:
    op = _find(name, variant)
    with seeded_rngs(seed_of(f"{name}.{variant}", dtype)):
        # The sample function itself, not ``op.sample_inputs``: that wrapper reseeds the global
        # generators before every sample and inspects the stack each time (slow).
        return tuple(op.sample_inputs_func(op, "cpu", TORCH_DTYPES[dtype], requires_grad=False))


def call_arguments(sample: Any) -> tuple[tuple[Any, ...], dict[str, object]]:
    """A sample as the ``(positional, keyword)`` arguments of the op."""
    return (sample.input, *sample.args), dict(sample.kwargs)


def sample_case(
    entry: OpEntry, dtype: str, sample: Any, label: str, *, exact_layout: bool = False
) -> UnitCase:
    """The unit case calling the op on ``sample``.

    ``exact_layout`` places every tensor on the device with the very strides it has on CPU
    (gaps, transposes and zero strides included); otherwise tensors are copied the way the
    first v1 lock ran them (``to_device``: dense layouts kept, gaps closed), so the inputs an
    existing id names do not change.
    """
    return arguments_case(entry, dtype, call_arguments(sample), label, exact_layout=exact_layout)


def arguments_case(
    entry: OpEntry, dtype: str, arguments: Any, label: str, *, exact_layout: bool = False
) -> UnitCase:
    """The unit case calling the op on ``arguments`` (``(positional, keyword)``, as
    ``call_arguments`` gives a sample's): ``sample_case`` without the sample, so that a judge
    handed the inputs need not generate the op's samples (``kit.tiers.unit.taken_inputs``)."""
    op = find_opinfo(entry)

    def make_inputs(device: str, upcast: bool) -> Any:
        if exact_layout:
            return map_tensors(arguments, lambda t: place_exact(t, device, upcast))
        return to_device(upcast_floating(arguments) if upcast else arguments, device)

    def call(device: str, upcast: bool, inputs: Any) -> Any:
        args, kwargs = inputs
        return op(*args, **kwargs)

    return UnitCase(label, dtype, entry.comparison, make_inputs, call, aten_ops=(op.aten_name,),
                    input_names=positional_names(op.op), op=entry.name)


def positional_names(function: Any) -> dict[str, str]:
    """``args[i]`` -> the name of the i-th positional parameter of ``function`` (the OpInfo's
    callable: a sample's input is its first), where Python can read a signature."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a builtin without a text signature
        return {}
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in parameters if p.kind in positional]
    return {f"args[{index}]": name for index, name in enumerate(names)}


def place_exact(tensor: torch.Tensor, device: str, upcast: bool) -> torch.Tensor:
    """A copy of ``tensor`` on ``device`` with its sizes, strides and storage offset, the memory
    between its elements included (``to(device)`` would close the gaps of a strided view)."""
    tensor = tensor.detach()
    dtype = torch.float64 if upcast and tensor.dtype in FLOATING_TO_UPCAST else tensor.dtype
    if tensor.numel() == 0:
        return torch.empty_strided(tensor.shape, tensor.stride(), dtype=dtype, device=device)
    spans = zip(tensor.shape, tensor.stride(), strict=True)
    end = tensor.storage_offset() + 1 + sum((size - 1) * stride for size, stride in spans)
    memory = tensor.as_strided((end,), (1,), 0)
    placed = memory.to(device=device, dtype=dtype, copy=True)
    return placed.as_strided(tensor.shape, tensor.stride(), tensor.storage_offset())


def cpu_accepts(case: UnitCase) -> bool:
    """Whether the CPU reference runs of ``case`` (same dtype, and float64 where the check
    uses one) finish without an error: a variant is part of the standard only then."""
    widened = case.comparison.reference == FLOAT64_REFERENCE and case.dtype in WIDENED_DTYPES
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for upcast in (False, True) if widened else (False,):
            try:
                case.call("cpu", upcast, case.make_inputs("cpu", upcast))
            except Exception:  # any failure means CPU does not accept these inputs
                return False
    return True


def tensors_of(sample: Any) -> list[torch.Tensor]:
    """Every tensor of a sample, its input first."""
    return [t for _, t in tensor_leaves(call_arguments(sample))]


def numel_of_sample(sample: Any) -> int:
    return sum(t.numel() for t in tensors_of(sample))


def transform_tensors(sample: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """A new sample with ``fn`` applied to every tensor (inside lists too)."""
    from torch.testing._internal.opinfo.core import SampleInput

    return SampleInput(
        map_tensors(sample.input, fn),
        args=map_tensors(tuple(sample.args), fn),
        kwargs=map_tensors(dict(sample.kwargs), fn),
    )
