"""``extremes``: integer tensors holding values at and next to the dtype's min and max, mixed
with small ones, so a saturating or widening kernel differs from CPU's wrapping one."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from kit.errors import InputError
from kit.tiers.unit.samples import tensors_of, transform_tensors
from kit.tiers.unit.variants.interface import (
    Candidate,
    VariantKind,
    VariantSource,
    largest_first,
)
from kit.tiers.unit.variants.rules import Groups, VariantRule

#: Integer dtypes, the only ones ``extremes`` applies to (its values are the dtype's limits).
INTEGER_DTYPES = ("int64", "int32")
#: The most tensor elements a candidate may hold: variants stay unit-sized.
MAX_NUMEL = 1 << 12
#: How many values next to each integer limit are drawn from (min .. min+k-1).
EXTREME_SPAN = 5


class Extremes(VariantKind):
    name = "extremes"
    summary = "integer tensors at and next to their dtype's limits, mixed with small values"

    def rule(self, rule_name: str, raw: Mapping[str, Any], where: str, groups: Groups
             ) -> VariantRule:
        """``ops`` and ``dtypes``, which must be integer dtypes."""
        rule = super().rule(rule_name, raw, where, groups)
        if rule.dtypes is None or not set(rule.dtypes) <= set(INTEGER_DTYPES):
            raise InputError(
                f"{where}.dtypes: extremes needs integer dtypes from {INTEGER_DTYPES}"
            )
        return rule

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        """The largest samples first, their tensors of the tested dtype refilled."""
        dtype = source.torch_dtype
        for sample in largest_first(source.samples, MAX_NUMEL):
            if any(t.dtype == dtype and t.numel() > 0 for t in tensors_of(sample)):
                yield functools.partial(_with_extremes, sample, dtype)


def _with_extremes(sample: Any, dtype: torch.dtype) -> Any:
    return transform_tensors(
        sample, lambda t: extreme_values(t) if t.dtype == dtype else t.clone()
    )


def extreme_values(like: torch.Tensor) -> torch.Tensor:
    """Values of ``like``'s integer dtype and shape: a third at and above its min, a third at
    and below its max, a third small (-2..2), drawn from torch's seeded generator."""
    info = torch.iinfo(like.dtype)
    kind = torch.randint(0, 3, like.shape)
    offset = torch.randint(0, EXTREME_SPAN, like.shape, dtype=torch.int64)
    low = torch.full(like.shape, info.min, dtype=torch.int64) + offset
    high = torch.full(like.shape, info.max, dtype=torch.int64) - offset
    small = offset - EXTREME_SPAN // 2
    values = torch.where(kind == 0, low, torch.where(kind == 1, high, small))
    return values.to(like.dtype)
