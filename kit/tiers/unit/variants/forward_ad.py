"""``forwardad``: forward-mode derivatives (Jacobian-vector products) through dual tensors.

Forward-mode AD (``torch.autograd.forward_ad``, ``torch.func.jvp`` and ``jacfwd``) runs no
backward kernel: each op computes its result's tangent from its inputs' by its own formula
(PyTorch's ``derivatives.yaml`` ``result:`` entries, or a device's ``AutogradPrivateUse1``
kernels), which a device can get wrong while every backward is right. For an op OpInfo
declares forward-differentiable (``supports_forward_ad``), in a floating dtype,
``forwardad-<n>`` takes the op's tested sample ``n`` (the largest CPU differentiates forward),
makes each floating input a dual tensor with a seeded tangent, calls the op and judges, per
floating output, its primal value (``output[0]``) and its tangent (``tangent of output[0]``)
against CPU's float64 ones, under the rule's ``widening`` as ``backward``'s gradients (a
tangent multiplies by rounded forward results as a gradient does), the scale at least the
largest seeded tangent. A sample whose every output tangent is below ``SIGNAL`` of the largest
input tangent gets no test: a zero result would pass it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.autograd.forward_ad as fwad

from kit.numerics.model import Widening
from kit.tiers.unit.checking import UnitCase
from kit.tiers.unit.entries import OpEntry
from kit.tiers.unit.samples import call_arguments, find_opinfo, place_exact, sample_case
from kit.tiers.unit.trees import clone, map_tensors, tensor_leaves
from kit.tiers.unit.variants.backward import Backward, gradient_comparison, largest, vanishing
from kit.tiers.unit.variants.interface import VariantSource

#: How the result names the op's outputs (``output``, ``output[1]``) and their tangents.
OUTPUT = "output"
TANGENT = "tangent of "


@dataclass(frozen=True)
class TangentSample:
    """An OpInfo sample with a seeded tangent per floating input, and the rule's bounds."""

    sample: Any
    #: One per floating input the op does not update by design, in ``tensor_leaves`` order.
    tangents: tuple[torch.Tensor, ...]
    widening: Widening
    exact_class: str


class ForwardAD(Backward):
    name = "forwardad"
    summary = ("forwardad-<n>: the primal values and tangents of OpInfo sample n called on dual "
               "tensors (forward-mode AD)")
    samples_per_dtype = 1

    def differentiates(self, op: Any) -> bool:
        return bool(op.supports_forward_ad)

    def prepared(self, forward: Callable[..., Any], source: VariantSource, sample: Any
                 ) -> TangentSample | None:
        return _with_tangents(forward, source, sample)

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        """The outputs and tangents on the sample, its tangents placed and upcast with the
        inputs; they count in the digest and in ``K`` as extra operands."""
        plain = sample_case(entry, dtype, sample.sample, label, exact_layout=True)
        op = find_opinfo(entry)
        kept, compared = entry.comparison.mutates, entry.comparison.compare_outputs

        def call(device: str, upcast: bool, inputs: Any) -> Any:
            tangents = [place_exact(t, device, upcast) for t in sample.tangents]
            return jvp(op, inputs, tangents, kept, compared)

        comparison = gradient_comparison(entry.comparison, sample.widening, sample.exact_class,
                                         largest(sample.tangents))
        return UnitCase(label, dtype, comparison, plain.make_inputs, call,
                        extra_operands=sample.tangents, op=plain.op,
                        input_names=plain.input_names)


def jvp(op: Callable[..., Any], inputs: Any, tangents: list[torch.Tensor],
        kept: tuple[str, ...], compared: tuple[int, ...] | None) -> dict[str, torch.Tensor]:
    """Per floating output of ``op`` on dual ``inputs`` (those of ``compared`` positions, for a
    tuple whose other outputs are unspecified), its primal value, then its tangent (zero where
    it has none, as forward AD defines it)."""
    with fwad.dual_level():
        args, kwargs = _dual(inputs, iter(tangents), kept)
        outputs = list(_floating_outputs(op(*args, **kwargs), compared))
        unpacked = [(name, fwad.unpack_dual(output)) for name, output in outputs]
        primals = {f"{OUTPUT}{name}": dual.primal.detach().clone() for name, dual in unpacked}
        tangent_of = {f"{TANGENT}{OUTPUT}{name}": _tangent(dual) for name, dual in unpacked}
    return {**primals, **tangent_of}


def _dual(inputs: Any, tangents: Iterator[torch.Tensor], kept: tuple[str, ...]) -> Any:
    names = iter([name for name, _ in tensor_leaves(inputs)])

    def dual(tensor: torch.Tensor) -> torch.Tensor:
        name = next(names)
        if not tensor.is_floating_point() or name in kept:
            return tensor
        return fwad.make_dual(tensor, next(tangents))

    return map_tensors(inputs, dual)


def _floating_outputs(result: Any, compared: tuple[int, ...] | None
                      ) -> Iterator[tuple[str, torch.Tensor]]:
    positions = range(len(result)) if isinstance(result, (tuple, list)) else None
    for name, tensor in tensor_leaves(result):
        chosen = (compared is None or positions is None
                  or int(name[1:].split("]", 1)[0]) in compared)
        if chosen and tensor.is_floating_point():
            yield name, tensor


def _tangent(dual: Any) -> torch.Tensor:
    found = dual.tangent
    # A tangent known to be zero may be a ZeroTensor, which holds no memory to compare.
    if found is None or found._is_zerotensor():
        return torch.zeros_like(dual.primal).detach()
    return found.detach().clone()


def _with_tangents(op: Callable[..., Any], source: VariantSource, sample: Any
                   ) -> TangentSample | None:
    """The sample with a seeded tangent (normal values) per floating input; None where it has
    none, CPU cannot differentiate it forward, or every output tangent is flat
    (``vanishing``)."""
    kept = source.entry.comparison.mutates
    arguments = call_arguments(sample)
    tangents = tuple(torch.randn(t.shape, dtype=torch.float64).to(t.dtype)
                     for name, t in tensor_leaves(arguments)
                     if t.is_floating_point() and name not in kept)
    if not tangents:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            # A copy: the op may update inputs in place, and OpInfo's samples are cached.
            result = jvp(op, clone(arguments), list(tangents), kept,
                         source.entry.comparison.compare_outputs)
        except Exception:  # noqa: BLE001 - CPU refuses the sample: no test
            return None
    found = [t for name, t in result.items() if name.startswith(TANGENT)]
    if not found or vanishing(found, tangents):
        return None
    rule = source.rule
    assert rule.widening is not None  # every forwardad rule declares it
    return TangentSample(sample, tangents, rule.widening, rule.exact_class)
