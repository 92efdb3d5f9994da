"""``expanded``: the input replaced by one slice of it, expanded back (a stride-0 dimension, as
broadcasting views hand kernels)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import torch

from kit.tiers.unit.samples import transform_tensors
from kit.tiers.unit.variants.interface import (
    Candidate,
    VariantKind,
    VariantSource,
    largest_first,
)

#: The most tensor elements a candidate may hold: variants stay unit-sized.
MAX_NUMEL = 1 << 12


class Expanded(VariantKind):
    name = "expanded"
    summary = "the largest sample with its input one slice expanded back (a stride of 0)"

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        """The largest samples first whose input is a tensor with a dimension longer than 1."""
        for sample in largest_first(source.samples, MAX_NUMEL):
            if isinstance(sample.input, torch.Tensor) and any(n > 1 for n in sample.input.shape):
                yield functools.partial(_expanded_sample, sample)


def _expanded_sample(sample: Any) -> Any:
    """The input replaced by its first slice along its first dimension longer than 1, expanded
    back to its shape: the same slice repeated, through a stride of 0."""
    made = transform_tensors(sample, lambda t: t.clone())
    tensor = sample.input
    dim = next(d for d, size in enumerate(tensor.shape) if size > 1)
    made.input = tensor.narrow(dim, 0, 1).clone().expand(tensor.shape)
    return made
