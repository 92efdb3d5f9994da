"""The accumulation length ``K`` of the error model (``kit.numerics.model``): how many terms an
output element may have accumulated, bounded from the shapes of the op's inputs alone."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any


def accumulation_length(inputs: Any, output_numel: int) -> int:
    """An upper bound of how many terms any output element accumulates, from shapes alone.

    The largest of, over the floating tensor inputs: the reduction ratio (input numel over
    output numel: full and per-dim reductions), the longest dimension (softmax, cumsum, the K of
    a matmul) and one slice of the first dimension (a conv or linear weight's fan-in). Exact for
    reductions and weight fan-ins, an overestimate (never an underestimate) elsewhere.
    """
    length = 1
    for shape in _floating_shapes(inputs):
        numel = math.prod(shape)
        if numel <= 1:
            continue
        candidates = [max(shape), numel // max(1, output_numel)]
        if len(shape) > 1:
            candidates.append(numel // shape[0])
        length = max(length, *candidates)
    return length


def _floating_shapes(value: Any) -> Iterator[tuple[int, ...]]:
    import torch

    if isinstance(value, torch.Tensor):
        if value.is_floating_point() or value.is_complex():
            yield tuple(value.shape)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _floating_shapes(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _floating_shapes(item)
    elif isinstance(value, torch.nn.Module):
        for parameter in value.parameters():
            yield tuple(parameter.shape)

