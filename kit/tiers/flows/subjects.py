"""Subjects of the flows tier: a unit case as a module of positional tensors.

A unit case calls an op on nested arguments (tensors, numbers, lists, keywords); its subject
takes the tensor leaves in order as positional inputs, puts them back in place (the other
leaves are constants of the module) and returns the compared outputs' tensors, flattened
(``kit.flows.subjects.CallModule``). A model's subject is the models tier's
(``kit.tiers.models.subject``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import torch

from kit.flows.interface import Subject
from kit.flows.subjects import CallModule
from kit.tiers.unit.trees import map_tensors, select_outputs, tensor_leaves

if TYPE_CHECKING:
    from kit.tiers.unit.checking import UnitCase


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

    return Subject(test_id, CallModule(call, module).eval(), inputs)


def _with_leaves(template: Any, tensors: Iterator[torch.Tensor]) -> Any:
    # map_tensors walks tensors in the order tensor_leaves lists them.
    return map_tensors(template, lambda _: next(tensors))
