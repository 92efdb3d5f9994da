"""``viewwrite``: a write through the op's result must reach its input exactly where CPU's does.

An op that returns a view on CPU (``transpose``, ``narrow``, ``split``, basic indexing) shares
its input's memory: users write through views (``x[:, 0] = 0``, ``x.t().mul_(2)``) and expect
the base to change. A device that returns a copy computes the right values and fails only there.
Whether a tensor "is a view" cannot be read on every device (a Python device has no storage
pointer, and autograd marks the result a view whatever the kernel did), so the check is what
users see: after the call, every tensor of the result is filled with a marker (each memory
location once: a dimension of stride 0, as ``expand`` gives, is written through its first index,
``distinct_elements``, since an overlapping write is valid only where a kernel special-cases it);
then

- the fact "a write through the result reaches its input" must be CPU's (``not-a-view``);
- the input, updated through the result, must hold CPU's values (a view into the wrong place
  writes the wrong elements).

For an op that copies on CPU (``flip``), the write must not reach the input either.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import torch

from kit.tiers.unit.checking import Fact, UnitCase
from kit.tiers.unit.entries import OpEntry
from kit.tiers.unit.samples import find_opinfo
from kit.tiers.unit.trees import tensor_leaves
from kit.tiers.unit.variants.forms import MAX_NUMEL, SELF, Arguments, Written, form_case
from kit.tiers.unit.variants.interface import (
    Candidate,
    VariantKind,
    VariantSource,
    tested_largest_first,
)


class ViewWrite(VariantKind):
    name = "viewwrite"
    summary = "the result filled after the call: the write reaches the input as on CPU"

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        for sample in tested_largest_first(source, MAX_NUMEL):
            if not isinstance(sample.input, torch.Tensor):
                continue
            yield functools.partial(lambda chosen: chosen, sample)

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        op = find_opinfo(entry)
        written = Written()

        def call(args: tuple[Any, ...], kwargs: dict[str, object]) -> Any:
            written.remember(args[0])
            result = op(*args, **kwargs)
            for _, tensor in tensor_leaves(result):
                distinct_elements(tensor).fill_(marker(tensor.dtype))
            return result

        def observe(inputs: Arguments, result: Any) -> tuple[Fact, ...]:
            return (Fact("a write through the result reaches its input", "not-a-view",
                         written.changed(inputs[0][0])),)

        return form_case(entry, dtype, sample, label, call, observe=observe, mutates=(SELF,))


def distinct_elements(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` with each dimension of stride 0 narrowed to its first index: a view that
    addresses every memory location ``tensor`` does, each once.

    An expanded result holds several elements per location; writing all of them is legal only
    where a kernel special-cases it (CPU's ``fill_``): a backend's boxed fallback copies the
    written result back into every element, which PyTorch refuses ("more than one element of
    the written-to tensor refers to a single memory location"). Written once per location, the
    input changes exactly as it does after the full write, on every backend."""
    for dim, (size, stride) in enumerate(zip(tensor.shape, tensor.stride(), strict=True)):
        if stride == 0 and size > 1:
            tensor = tensor.narrow(dim, 0, 1)
    return tensor


def marker(dtype: torch.dtype) -> bool | int | float:
    """A value the op's samples rarely hold, so a write shows: True, 7 or 7.5."""
    if dtype == torch.bool:
        return True
    return 7.5 if dtype.is_floating_point else 7
