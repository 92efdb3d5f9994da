"""A subject's module: a call on positional tensors that returns its result's tensors, flattened.

``torch.export`` and the backends take a module called with positional tensors and returning
tensors; the tiers that run subjects through flows (``kit.tiers.flows``: an op's call on a unit
case's inputs; ``kit.tiers.models``: a model on its inputs) wrap their call in ``CallModule``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import torch


class CallModule(torch.nn.Module):
    """``forward(*tensors)``: ``call`` on the tensors, its result's tensors flattened."""

    def __init__(
        self, call: Callable[[Sequence[torch.Tensor]], Any], inner: torch.nn.Module | None = None
    ) -> None:
        super().__init__()
        self._call = call
        # Registered, so that export sees a model's weights as parameters, not stray constants.
        self.inner = inner

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return flat_tensors(self._call(tensors))


def flat_tensors(value: Any) -> tuple[torch.Tensor, ...]:
    """The tensors of a nested result in order (numbers and None left out)."""
    return tuple(_tensors(value))


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _tensors(item)
