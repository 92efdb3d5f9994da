"""``gradgrad``: second-order gradients, back-propagated through the op's own backward.

A device's backward kernels can be right while their own derivatives are wrong: a double
backward (a gradient penalty, a Hessian-vector product, MAML's inner step) differentiates the
backward graph, which calls other kernels (``tanh_backward``'s backward, a matmul's products of
the gradients) or a device's own ``AutogradPrivateUse1`` formulas. For an op OpInfo declares
twice differentiable (``supports_gradgrad``), in a floating dtype, ``gradgrad-<n>`` takes the
op's tested sample ``n`` (the largest CPU differentiates twice), makes each floating input and
each seeded ``grad_output`` a leaf requiring grad, computes the first-order gradients with
``create_graph=True``, then back-propagates a seeded vector ``v`` per input through them: the
gradient of ``<grad, v>`` with respect to the inputs (``second-order grad of args[0]``: a
Hessian-vector product) and to the ``grad_outputs`` (``second-order grad of grad_outputs[0]``:
the op's Jacobian times ``v``), as PyTorch's ``gradgradcheck`` does.

Judged like ``backward``'s gradients against CPU's float64 ones, under the rule's ``widening``
(NUMERICS.md, "Second-order gradients"), the scale at least the largest seeded value. A sample
whose every second-order gradient is below ``SIGNAL`` of the largest ``v`` gets no test: a zero
result would pass it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from kit.numerics.model import Widening
from kit.tiers.unit.checking import UnitCase
from kit.tiers.unit.entries import OpEntry
from kit.tiers.unit.samples import call_arguments, find_opinfo, place_exact, sample_case
from kit.tiers.unit.trees import clone
from kit.tiers.unit.variants.backward import (
    Backward,
    attach,
    differentiable_outputs,
    gradient_comparison,
    largest,
    vanishing,
)
from kit.tiers.unit.variants.interface import VariantSource

#: How the result names the gradient with respect to a ``grad_output``.
GRAD_OUTPUTS = "grad_outputs"


@dataclass(frozen=True)
class SecondOrderSample:
    """An OpInfo sample with the two seeded vectors of a double backward and the rule's bounds."""

    sample: Any
    #: One per differentiable output of the op, in its dtype (CPU tensors).
    grad_outputs: tuple[torch.Tensor, ...]
    #: One per floating input (the leaves, in ``attach``'s order), shaped as its gradient:
    #: the vector ``v`` the first-order gradients are back-propagated with.
    grad_grads: tuple[torch.Tensor, ...]
    widening: Widening
    exact_class: str

    @property
    def seeds(self) -> tuple[torch.Tensor, ...]:
        return self.grad_outputs + self.grad_grads


class GradGrad(Backward):
    name = "gradgrad"
    summary = ("gradgrad-<n>: the second-order gradients of OpInfo sample n, with respect to "
               "its inputs and its grad_outputs")
    samples_per_dtype = 1

    def differentiates(self, op: Any) -> bool:
        return bool(op.supports_autograd and op.supports_gradgrad)

    def prepared(self, forward: Callable[..., Any], source: VariantSource, sample: Any
                 ) -> SecondOrderSample | None:
        return _with_second_vectors(forward, source, sample)

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        """The second-order gradients on the sample, its seeded vectors placed and upcast with
        the inputs; they count in the digest and in ``K`` as extra operands."""
        plain = sample_case(entry, dtype, sample.sample, label, exact_layout=True)
        op = find_opinfo(entry)
        plain = replace(plain, call=lambda device, upcast, inputs: op(*inputs[0], **inputs[1]))
        kept = entry.comparison.mutates

        def call(device: str, upcast: bool, inputs: Any) -> Any:
            def placed(tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
                return [place_exact(t, device, upcast) for t in tensors]

            return second_order(lambda attached: plain.call(device, upcast, attached), inputs,
                                placed(sample.grad_outputs), placed(sample.grad_grads), kept)

        comparison = gradient_comparison(entry.comparison, sample.widening, sample.exact_class,
                                         largest(sample.seeds))
        return UnitCase(label, dtype, comparison, plain.make_inputs, call,
                        extra_operands=sample.seeds, op=plain.op, input_names=plain.input_names)


def second_order(call: Callable[[Any], Any], inputs: Any, grad_outputs: list[torch.Tensor],
                 grad_grads: list[torch.Tensor], kept: tuple[str, ...]
                 ) -> dict[str, torch.Tensor]:
    """Per floating input, then per ``grad_output``, the gradient of ``<first-order grads, v>``
    (zero where none reaches it, as autograd defines it)."""
    with torch.enable_grad():
        names, leaves, attached = attach(inputs, kept)
        seeds = [g.detach().requires_grad_() for g in grad_outputs]
        outputs = differentiable_outputs(call(attached))
        firsts = torch.autograd.grad(outputs, leaves, seeds, create_graph=True,
                                     allow_unused=True)
        # A first-order gradient that does not depend on any leaf (a constant) has no graph.
        linked = [(f, v) for f, v in zip(firsts, grad_grads, strict=True)
                  if f is not None and f.requires_grad]
        targets = leaves + seeds
        seconds = (torch.autograd.grad([f for f, _ in linked], targets, [v for _, v in linked],
                                       allow_unused=True)
                   if linked else (None,) * len(targets))
    labels = names + [f"{GRAD_OUTPUTS}[{i}]" for i in range(len(seeds))]
    return {f"second-order grad of {label}": _or_zero(second, target)
            for label, second, target in zip(labels, seconds, targets, strict=True)}


def _or_zero(second: torch.Tensor | None, target: torch.Tensor) -> torch.Tensor:
    # Autograd returns a formula's known zeros (abs's second derivative) as a ZeroTensor,
    # which holds no memory to copy or compare: a plain zero tensor stands for it.
    if second is None or second._is_zerotensor():
        return torch.zeros_like(target).detach()
    return second.detach()


def _with_second_vectors(op: Callable[..., Any], source: VariantSource, sample: Any
                         ) -> SecondOrderSample | None:
    """The sample with a seeded ``grad_output`` per differentiable output and a seeded ``v`` per
    floating input (normal values); None where CPU cannot differentiate it twice or every
    second-order gradient is flat (``vanishing``: a linear op's Hessian is zero, and so would
    be its every ``v``-product with respect to a ``grad_output`` where the op is constant)."""
    kept = source.entry.comparison.mutates
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            # A copy: the op may update inputs in place, and OpInfo's samples are cached.
            arguments = clone(call_arguments(sample))
            _, leaves, attached = attach(arguments, kept)
            with torch.enable_grad():
                outputs = differentiable_outputs(op(*attached[0], **attached[1])) if leaves else []
            grad_outputs = tuple(_normal_like(o) for o in outputs)
            grad_grads = tuple(_normal_like(leaf) for leaf in leaves)
            if not outputs:
                return None
            seconds = second_order(lambda again: op(*again[0], **again[1]),
                                   clone(call_arguments(sample)), list(grad_outputs),
                                   list(grad_grads), kept)
        except Exception:  # noqa: BLE001 - CPU refuses the sample: no test
            return None
    if vanishing(tuple(seconds.values()), grad_grads):
        return None
    rule = source.rule
    assert rule.widening is not None  # every gradgrad rule declares it
    return SecondOrderSample(sample, grad_outputs, grad_grads, rule.widening, rule.exact_class)


def _normal_like(tensor: torch.Tensor) -> torch.Tensor:
    """Seeded normal values of ``tensor``'s shape and dtype (drawn in float64: the same values
    whatever the dtype's own generator path)."""
    return torch.randn(tensor.shape, dtype=torch.float64).to(tensor.dtype)
