"""``inplacebackward``: gradients through the op's in-place variant, and version-counter parity.

Training code calls in-place ops on tensors autograd tracks (``x.relu_()`` inside a block,
``h.add_(residual)``): autograd then differentiates the in-place kernel's result against the
tensor it overwrote, and refuses a backward whose saved tensors were changed in place after
the forward (their version counter moved). A device that registers its own autograd kernels
(``AutogradPrivateUse1``) for an in-place op can get either wrong while the out-of-place op's
gradients are right.

For an op OpInfo declares differentiable and with an in-place variant, in a floating dtype,
``inplacebackward-<n>`` takes the op's tested sample ``n`` (the largest CPU differentiates in
place), makes each floating input a leaf requiring grad, calls the in-place variant on a copy of
the first (``x.clone().op_(...)``: a leaf cannot be updated in place) and back-propagates a
seeded ``grad_output``: the gradients and their accumulation are judged as ``backward``'s.
Besides the values, one fact is compared with CPU's: after the out-of-place op, its first input
changed in place (by ``mul_(1)``: no value moves, its version does), a backward raises exactly
where CPU's raises (``version-counter``): the op saved that input for its backward.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch

from kit.tiers.unit.checking import Fact, UnitCase
from kit.tiers.unit.entries import OpEntry
from kit.tiers.unit.samples import find_opinfo
from kit.tiers.unit.variants.backward import (
    Backward,
    attach,
    differentiable_outputs,
)

#: What autograd says when a tensor saved for backward changed after the forward.
VERSION_ERROR = "modified by an inplace operation"
VERSION_FACT = "a backward after its first input changed in place (a saved tensor) raises"


class InplaceBackward(Backward):
    name = "inplacebackward"
    summary = ("inplacebackward-<n>: gradients through the in-place variant on a tracked copy, "
               "and a changed saved input raising where CPU's does")
    samples_per_dtype = 1

    def forward(self, op: Any) -> Callable[..., Any] | None:
        inplace = op.inplace_variant
        if inplace is None:
            return None

        def call(*args: Any, **kwargs: Any) -> Any:
            if not (args and isinstance(args[0], torch.Tensor) and args[0].requires_grad):
                raise TypeError("no tracked tensor to update in place")
            return inplace(args[0].clone(), *args[1:], **kwargs)

        return call

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        made = super().case(entry, dtype, sample, label)
        op = find_opinfo(entry)
        return replace(made, observe=version_counter_observer(op, entry.comparison.mutates))


def version_counter_observer(
    op: Any, kept: tuple[str, ...]
) -> Callable[[Any, Any], tuple[Fact, ...]]:
    """Whether a backward raises after the op's first input changed in place, on the inputs
    the case was given (their own device and dtype)."""

    def observe(inputs: Any, result: Any) -> tuple[Fact, ...]:
        return (Fact(VERSION_FACT, "version-counter", _backward_after_change(op, inputs, kept)),)

    return observe


def _backward_after_change(op: Any, inputs: Any, kept: tuple[str, ...]) -> str:
    with torch.enable_grad():
        names, _, attached = attach(inputs, kept)
        args, kwargs = attached
        if not names or names[0] != "args[0]":
            return "no tracked first input"
        first = args[0].clone()
        outputs = differentiable_outputs(op(first, *args[1:], **kwargs))
        if not outputs:
            return "no differentiable output"
        first.mul_(1)
        try:
            torch.autograd.backward(outputs, [torch.ones_like(o) for o in outputs])
        except RuntimeError as error:
            return "raises: saved tensor changed" if VERSION_ERROR in str(error) else "raises"
    return "no error"
