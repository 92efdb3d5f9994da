"""``empty``: a sample whose tensors get a zero-size dimension (an abort on empty input)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import torch

from kit.tiers.unit.samples import tensors_of, transform_tensors
from kit.tiers.unit.trees import map_tensors
from kit.tiers.unit.variants.interface import Candidate, VariantKind, VariantSource


class Empty(VariantKind):
    name = "empty"
    summary = "a sample with a zero-size dimension in its input, or in every tensor"

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        """Per sample in OpInfo's order: the input's first dimension emptied, then every
        tensor's first dimension, then every tensor's last (broadcasting operands line up from
        the right)."""
        for sample in source.samples:
            yield functools.partial(_emptied, sample, inputs_only=True, dim=0)
            yield functools.partial(_emptied, sample, inputs_only=False, dim=0)
            yield functools.partial(_emptied, sample, inputs_only=False, dim=-1)


def _emptied(sample: Any, *, inputs_only: bool, dim: int) -> Any:
    def empty(t: torch.Tensor) -> torch.Tensor:
        return t.narrow(dim, 0, 0).clone() if t.dim() > 0 else t.clone()

    if inputs_only:
        made = transform_tensors(sample, lambda t: t.clone())
        made.input = map_tensors(sample.input, empty)
    else:
        made = transform_tensors(sample, empty)
    changed = any(
        a.numel() == 0 and b.numel() > 0
        for a, b in zip(tensors_of(made), tensors_of(sample), strict=True)
    )
    return made if changed else None
