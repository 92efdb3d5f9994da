"""Subjects of the flows tier: a unit case or a built model as a module of positional tensors.

``torch.export`` and the backends take a module called with positional tensors and returning
tensors. A unit case calls an op on nested arguments (tensors, numbers, lists, keywords); its
subject takes the tensor leaves in order as positional inputs, puts them back in place (the
other leaves are constants of the module) and returns the compared outputs' tensors, flattened.
A model's subject takes its keyword inputs in the order models.yaml lists them and returns the
tensors of the output field the model tier compares.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import torch

from kit.flows.interface import Subject
from kit.tiers.unit.trees import map_tensors, select_outputs, tensor_leaves

if TYPE_CHECKING:
    from kit.tiers.models.interface import BuiltModel, ModelCase
    from kit.tiers.unit.checking import UnitCase


class _CallModule(torch.nn.Module):
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
    return tuple(tensor for _, tensor in tensor_leaves(value))


def unit_subject(test_id: str, case: UnitCase) -> Subject:
    """The subject of ``case``: its seeded CPU inputs' tensors in, its compared outputs out."""
    template = case.make_inputs("cpu", False)
    # A program's inputs are dense buffers (ExecuTorch refuses strided ones at run): the op
    # spec's layouts test eager kernels; a flow gets the same values, contiguous.
    inputs = tuple(tensor.contiguous() for _, tensor in tensor_leaves(template))

    module = case.extra_operands if case.call_module is not None else None
    call_module = case.call_module

    def call(tensors: Sequence[torch.Tensor]) -> Any:
        arguments = _with_leaves(template, iter(tensors))
        if call_module is not None:
            result = call_module(module, arguments)
        else:
            result = case.call("cpu", False, arguments)
        return select_outputs(result, case.comparison.compare_outputs)

    return Subject(test_id, _CallModule(call, module).eval(), inputs)


def _with_leaves(template: Any, tensors: Iterator[torch.Tensor]) -> Any:
    # map_tensors walks tensors in the order tensor_leaves lists them.
    return map_tensors(template, lambda _: next(tensors))


def model_subject(test_id: str, built: BuiltModel, case: ModelCase) -> Subject:
    """The subject of a built model: keyword inputs in their listed order, the compared field
    out."""
    from kit.tiers.models.flows import select_output

    module = built.module
    if not isinstance(built.inputs, Mapping):
        positional = tuple(built.inputs)
        return Subject(test_id, _CallModule(
            lambda tensors: select_output(module(*tensors), case.output), module).eval(),
            positional)
    names = tuple(built.inputs)

    def call(tensors: Sequence[torch.Tensor]) -> Any:
        return select_output(module(**dict(zip(names, tensors, strict=True))), case.output)

    inputs = tuple(built.inputs[name] for name in names)
    return Subject(test_id, _CallModule(call, module).eval(), inputs)
