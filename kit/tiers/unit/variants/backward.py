"""``backward``: the op's gradients computed on the device, and accumulated into ``.grad``.

Every other unit test runs the op under ``torch.no_grad``, so a device whose backward kernels
are wrong (``tanh_backward``, a matmul's transposed products, a broadcast's gradient summed
back to its input's shape) passes them all and breaks every training run. For an op OpInfo
declares differentiable (``supports_autograd``), in a floating dtype, ``backward-<n>`` takes
the op's tested OpInfo sample ``n`` (the largest one and the smallest one CPU differentiates:
a scalar or broadcast operand's gradient is a sum), makes each floating input a leaf
requiring grad, calls the op and back-propagates a seeded ``grad_output`` per differentiable
output (the same values on every device: built once with the sample, upcast with the inputs
for the float64 reference). The result is, per input, its gradient (``grad of args[1]``), then,
after a second forward and backward call, what ``.grad`` accumulated (``grad of args[1],
accumulated twice``): twice the first. Inputs the op updates by design (running statistics)
stay plain tensors.

Gradients are judged like values, against the float64 CPU gradients, under the op's own class
widened by the rule's ``widening`` (a backward pass rounds the forward's intermediates and its
own): ``ErrorModel.widened``. An op of the ``exact`` class (data movement) is judged by the
rule's ``exact_class``: its gradients sum where its forward copied (``expand``, ``gather`` of
repeated indices), which rounds.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import torch

from kit.errors import InputError
from kit.numerics.model import Widening
from kit.tiers.unit.checking import UnitCase
from kit.tiers.unit.entries import Comparison, OpEntry
from kit.tiers.unit.samples import call_arguments, find_opinfo, place_exact, sample_case
from kit.tiers.unit.trees import clone, map_tensors, tensor_leaves
from kit.tiers.unit.variants.interface import (
    LABEL_SEPARATOR,
    Candidate,
    VariantKind,
    VariantSource,
    tested_largest_first,
)
from kit.tiers.unit.variants.rules import (
    EXACT_CLASS,
    Groups,
    VariantRule,
    class_name,
    dtype_list,
    op_list,
    reject_unknown,
)

#: The most tensor elements a sample may hold: the test runs two forward and backward calls.
MAX_NUMEL = 1 << 12
#: Samples per op and dtype: the largest and the smallest CPU differentiates.
SAMPLES = 2
#: The least share of the largest ``|grad_output|`` some gradient must reach (``vanishing``).
SIGNAL = 1e-3
#: The op class whose gradients the rule's ``exact_class`` judges instead.
EXACT = EXACT_CLASS
_FIELDS = {"ops", "dtypes", "widening", "least_class", "exact_class"}


@dataclass(frozen=True)
class GradSample:
    """An OpInfo sample with the gradients fed back through the op and the rule's bounds."""

    sample: Any
    #: One per differentiable output of the op, in its dtype (CPU tensors).
    grad_outputs: tuple[torch.Tensor, ...]
    widening: Widening
    exact_class: str


class Backward(VariantKind):
    name = "backward"
    summary = "backward-<n>: the gradients of OpInfo sample n, computed and accumulated twice"
    #: Samples per op and dtype (the largest and the smallest CPU differentiates, alternately).
    samples_per_dtype: ClassVar[int] = SAMPLES

    def forward(self, op: Any) -> Callable[..., Any] | None:
        """The call differentiated (None: the op has none of this kind)."""
        return op  # type: ignore[no-any-return]

    def differentiates(self, op: Any) -> bool:
        """Whether OpInfo declares the op differentiable in this kind's way."""
        return bool(op.supports_autograd)

    def prepared(self, forward: Callable[..., Any], source: VariantSource, sample: Any
                 ) -> object | None:
        """The sample with the seeded tensors the kind feeds through ``forward`` (None: CPU
        cannot differentiate it, or its result carries no signal)."""
        return _with_grad_outputs(forward, source, sample)

    def rule(self, rule_name: str, raw: Mapping[str, Any], where: str, groups: Groups
             ) -> VariantRule:
        """``ops``, ``dtypes``, ``widening`` (>= 1), ``least_class`` and ``exact_class``."""
        reject_unknown(raw, _FIELDS, where)
        factor = raw.get("widening")
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or factor < 1:
            raise InputError(f"{where}.widening: expected a number of at least 1")
        least, exact_class = (class_name(raw, field, where)
                              for field in ("least_class", "exact_class"))
        return VariantRule(rule_name, self.name, op_list(raw.get("ops"), f"{where}.ops", groups),
                           dtype_list(raw.get("dtypes"), f"{where}.dtypes"),
                           widening=Widening(float(factor), least), exact_class=exact_class)

    def build(self, source: VariantSource, accepts: Callable[[Any], bool]) -> dict[str, object]:
        """Up to ``SAMPLES`` tested samples CPU differentiates, named by their position."""
        if not source.torch_dtype.is_floating_point:
            return {}
        op = find_opinfo(source.entry)
        forward = self.forward(op)
        if not self.differentiates(op) or forward is None:
            return {}
        built: dict[str, object] = {}
        for position in _preferred_positions(source):
            made = source.seeded(
                functools.partial(self.prepared, forward, source, source.samples[position]),
                position)
            if made is not None and accepts(made):
                built[f"{source.rule.name}{LABEL_SEPARATOR}{position}"] = made
            if len(built) == self.samples_per_dtype:
                break
        return built

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        return iter(())  # ``build`` names its samples by position

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        """The op's gradients on the sample (``gradients``), its ``grad_outputs`` placed and
        upcast with the inputs; they count in the digest and in ``K`` as extra operands."""
        plain = sample_case(entry, dtype, sample.sample, label, exact_layout=True)
        forward = self.forward(find_opinfo(entry))
        assert forward is not None  # ``build`` made the sample
        plain = replace(plain, call=lambda device, upcast, inputs: forward(*inputs[0], **inputs[1]))
        kept = entry.comparison.mutates

        def call(device: str, upcast: bool, inputs: Any) -> Any:
            grad_outputs = [place_exact(g, device, upcast) for g in sample.grad_outputs]
            return gradients(plain, device, upcast, inputs, grad_outputs, kept)

        comparison = gradient_comparison(entry.comparison, sample.widening, sample.exact_class,
                                         largest(sample.grad_outputs))
        # The op and its parameters' names ride along: a centred class's bound reads the
        # forward's statistics by op (``centring``), a failure names inputs by parameter.
        return UnitCase(label, dtype, comparison, plain.make_inputs, call,
                        extra_operands=sample.grad_outputs, op=plain.op,
                        input_names=plain.input_names)


def gradient_comparison(forward: Comparison, widening: Widening, exact_class: str,
                        scale_floor: float) -> Comparison:
    """The op's comparison for its gradients: every one compared, the bound widened, its scale
    at least ``scale_floor`` (the largest ``|grad_output|``: what the backward multiplies by)."""
    op_class = exact_class if forward.op_class == EXACT else forward.op_class
    return replace(forward, compare_outputs=None, op_class=op_class, widening=widening,
                   scale_floor=scale_floor)


def gradients(plain: UnitCase, device: str, upcast: bool, inputs: Any,
              grad_outputs: list[torch.Tensor], kept: tuple[str, ...]) -> dict[str, torch.Tensor]:
    """Per floating input, its gradient, then what ``.grad`` holds after a second call."""
    with torch.enable_grad():
        names, leaves, attached = attach(inputs, kept)
        _forward_backward(plain, device, upcast, attached, grad_outputs)
        first = {f"grad of {n}": _grad_of(leaf).clone()
                 for n, leaf in zip(names, leaves, strict=True)}
        _forward_backward(plain, device, upcast, attached, grad_outputs)
        twice = {f"grad of {n}, accumulated twice": _grad_of(leaf)
                 for n, leaf in zip(names, leaves, strict=True)}
    return {**first, **twice}


def attach(arguments: Any, kept: tuple[str, ...]
           ) -> tuple[list[str], list[torch.Tensor], Any]:
    """``arguments`` with each floating tensor (but those in ``kept``) a new leaf requiring
    grad, sharing its storage (the input itself is left as it is); the leaves and their names."""
    names = [name for name, _ in tensor_leaves(arguments)]
    chosen: list[str] = []
    leaves: list[torch.Tensor] = []
    position = iter(names)

    def leaf(tensor: torch.Tensor) -> torch.Tensor:
        name = next(position)
        if not tensor.is_floating_point() or name in kept:
            return tensor
        made = tensor.detach().requires_grad_()
        chosen.append(name)
        leaves.append(made)
        return made

    return chosen, leaves, map_tensors(arguments, leaf)


def _forward_backward(plain: UnitCase, device: str, upcast: bool, attached: Any,
                      grad_outputs: list[torch.Tensor]) -> None:
    outputs = differentiable_outputs(plain.call(device, upcast, attached))
    # Each seed where its output is: an op whose result leaves the device (``to("cpu")``) has
    # its gradient seeded on the CPU, as a user's loss there would be.
    torch.autograd.backward(outputs, [g.to(o.device) for g, o in
                                      zip(grad_outputs, outputs, strict=True)])


def differentiable_outputs(result: Any) -> list[torch.Tensor]:
    """The op's outputs autograd tracks (not indices, not outputs of no input)."""
    return [t for _, t in tensor_leaves(result) if t.requires_grad]


def _grad_of(leaf: torch.Tensor) -> torch.Tensor:
    # No gradient reached the input (it does not matter to the result): zero, as autograd
    # defines it; a device that leaves one where CPU has none then differs in values.
    return leaf.grad.detach() if leaf.grad is not None else torch.zeros_like(leaf).detach()


def _preferred_positions(source: VariantSource) -> list[int]:
    """The tested positions, largest and smallest sample alternately (within ``MAX_NUMEL``)."""
    by_size = tested_largest_first(source, MAX_NUMEL)
    order: list[Any] = []
    while by_size:
        order.append(by_size.pop(0))
        if by_size:
            order.append(by_size.pop())
    positions = {id(source.samples[i]): i for i in source.tested}
    return [positions[id(sample)] for sample in order]


def _with_grad_outputs(op: Callable[..., Any], source: VariantSource, sample: Any
                       ) -> GradSample | None:
    """The sample with a seeded ``grad_output`` (normal values) per differentiable output of
    the call ``op`` on CPU; None where it has none, CPU cannot differentiate it, or its
    gradients carry no signal (``vanishing``)."""
    with torch.enable_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            # A copy: the op may update inputs in place (running statistics), and OpInfo's
            # samples are cached for every other test of the op.
            arguments = clone(call_arguments(sample))
            _, leaves, attached = attach(arguments, source.entry.comparison.mutates)
            args, kwargs = attached
            outputs = differentiable_outputs(op(*args, **kwargs)) if leaves else []
            grad_outputs = tuple(torch.randn(o.shape, dtype=torch.float64).to(o.dtype)
                                 for o in outputs)
            grads = torch.autograd.grad(outputs, leaves, grad_outputs, allow_unused=True)
        except Exception:  # noqa: BLE001 - CPU refuses the sample: no test
            return None
    if not outputs or vanishing(grads, grad_outputs):
        return None
    rule = source.rule
    assert rule.widening is not None  # every backward rule declares it
    return GradSample(sample, grad_outputs, rule.widening, rule.exact_class)


def vanishing(grads: Any, grad_outputs: tuple[torch.Tensor, ...]) -> bool:
    """Whether every gradient is below ``SIGNAL`` of the largest ``|grad_output|``: the op is
    flat there (a norm of one element, a normalization of groups of one, a product of many
    small factors), so a zero result would pass for it."""
    return largest([g for g in grads if g is not None]) < SIGNAL * largest(grad_outputs)


def largest(tensors: Sequence[torch.Tensor]) -> float:
    """The largest ``|element|`` of any of ``tensors`` (0 if none has one)."""
    return max((float(t.abs().max()) for t in tensors if t.numel()), default=0.0)
