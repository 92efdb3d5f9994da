"""``noncontiguous``: every tensor transposed and/or strided with gaps holding NaN (or 12, or
True), placed on the device with exactly those strides; only where none of the op's tested
samples reaches the device non-contiguous."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import torch
from torch.testing._internal.common_utils import noncontiguous_like

from kit.tiers.unit.samples import call_arguments, tensors_of, transform_tensors
from kit.tiers.unit.trees import tensor_leaves, to_device
from kit.tiers.unit.variants.interface import (
    Candidate,
    VariantKind,
    VariantSource,
    largest_first,
)

#: The most tensor elements a candidate may hold: variants stay unit-sized.
MAX_NUMEL = 1 << 12


class Noncontiguous(VariantKind):
    name = "noncontiguous"
    summary = "the largest sample with every tensor transposed and strided with filled gaps"

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        """The largest samples first, every tensor scattered; nothing if the op's tested
        samples already reach the device non-contiguous."""
        if any(_reaches_device_noncontiguous(source.samples[i]) for i in source.tested):
            return
        for sample in largest_first(source.samples, MAX_NUMEL):
            yield functools.partial(_scattered_sample, sample)


def _reaches_device_noncontiguous(sample: Any) -> bool:
    # What tested samples go through: ``to_device`` keeps dense layouts and closes gaps.
    moved = to_device(call_arguments(sample), "cpu")
    return any(not t.is_contiguous() for _, t in tensor_leaves(moved))


def _scattered_sample(sample: Any) -> Any:
    made = transform_tensors(sample, scattered)
    return made if any(not t.is_contiguous() for t in tensors_of(made)) else None


def scattered(tensor: torch.Tensor) -> torch.Tensor:
    """The same values, transposed in memory (2-D and up) and with a gap after every element
    (OpInfo's ``noncontiguous_like``: NaN, 12 or True in the gaps)."""
    if tensor.dim() == 0 or tensor.numel() == 0:
        return tensor.clone()
    if tensor.dim() == 1:
        return noncontiguous_like(tensor.clone())
    return noncontiguous_like(tensor.mT.contiguous()).mT
