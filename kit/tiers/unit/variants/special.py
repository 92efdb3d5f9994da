"""``special``: the op's tensors of the tested floating dtype seeded with IEEE special values.

OpInfo's samples hold ordinary finite numbers, so what a kernel does with NaN, infinities,
negative zero and subnormals goes untested: a ``max`` that drops NaN, an activation that turns
``-inf`` into NaN, a kernel that flushes subnormal inputs to zero. This variant takes the op's
largest tested sample and puts, in about a quarter of the elements of each floating tensor of
the tested dtype, one of: NaN, +inf, -inf, -0.0, the smallest positive and negative subnormal,
the smallest positive normal (at least one of each where the tensor has room).

PyTorch's CPU semantics decide: wherever CPU's result in the tested dtype, or the float64
reference, is NaN or an infinity, CPU's tested-dtype result is the reference
(``UnitCase.specials_from_cpu``: ``gelu(-inf)`` is 0 in float32 and NaN in float64). Then
(``kit.numerics.comparison``) where the reference is NaN the device must give NaN, where it is
an infinity the same infinity, exactly; a NaN or infinity where the reference is finite fails.

Left out on purpose: matrix products (CPU libraries such as oneDNN, and accelerators, may treat
subnormal inputs as zero there, which turns ``inf * subnormal`` into NaN), and the largest
finite values (in a sum, whether ``max + max - max`` overflows depends on the order of the
additions, which the standard does not fix). ``nan_to_num`` is judged in its own dtype (its
replacements are that dtype's largest values).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import torch

from kit.tiers.unit.checking import UnitCase
from kit.tiers.unit.entries import OpEntry
from kit.tiers.unit.samples import tensors_of, transform_tensors
from kit.tiers.unit.variants.interface import (
    Candidate,
    VariantKind,
    VariantSource,
    tested_largest_first,
)

#: The most tensor elements a candidate may hold: variants stay unit-sized.
MAX_NUMEL = 1 << 12
#: About this share of each seeded tensor's elements become special values.
SHARE = 0.25


class Special(VariantKind):
    name = "special"
    summary = "NaN, +-inf, -0.0, subnormals and the smallest normal among the sample's values"

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        dtype = source.torch_dtype
        if not dtype.is_floating_point:
            return
        for sample in tested_largest_first(source, MAX_NUMEL):
            if not any(t.dtype == dtype and t.numel() > 0 for t in tensors_of(sample)):
                continue
            yield functools.partial(_with_specials, sample, dtype)

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        return replace(super().case(entry, dtype, sample, label), specials_from_cpu=True)


def special_values(dtype: torch.dtype) -> torch.Tensor:
    """The special values of a floating dtype, in a fixed order."""
    info = torch.finfo(dtype)
    subnormal = info.smallest_normal * info.eps  # the smallest positive subnormal
    values = [float("nan"), float("inf"), float("-inf"), -0.0, subnormal, -subnormal,
              info.smallest_normal]
    return torch.tensor(values, dtype=torch.float64).to(dtype)


def seeded_with_specials(tensor: torch.Tensor) -> torch.Tensor:
    """A copy of ``tensor`` with about ``SHARE`` of its elements special values, each special
    value at least once where there is room (positions from torch's seeded generator)."""
    specials = special_values(tensor.dtype)
    flat = tensor.detach().clone().reshape(-1)
    room = flat.numel()
    count = min(room, max(round(room * SHARE), len(specials)))
    positions = torch.randperm(flat.numel())[:count]
    picks = torch.arange(count) % len(specials)
    flat[positions] = specials[picks[torch.randperm(count)]]
    return flat.reshape(tensor.shape)


def _with_specials(sample: Any, dtype: torch.dtype) -> Any:
    return transform_tensors(
        sample, lambda t: seeded_with_specials(t) if t.dtype == dtype and t.numel() else t.clone()
    )
