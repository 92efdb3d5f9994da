"""A built model as a flow's subject: keyword inputs in the order ``models.yaml`` lists them
(or its positional inputs), the tensors of the compared output field out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from kit.flows.interface import Subject
from kit.flows.subjects import CallModule
from kit.tiers.models.flows import select_output
from kit.tiers.models.interface import BuiltModel, ModelCase


def model_subject(test_id: str, built: BuiltModel, case: ModelCase) -> Subject:
    """The subject of a built model: keyword inputs in their listed order, the compared field
    out."""
    module = built.module
    if not isinstance(built.inputs, Mapping):
        positional = tuple(built.inputs)
        return Subject(test_id, CallModule(
            lambda tensors: select_output(module(*tensors), case.output), module).eval(),
            positional)
    names = tuple(built.inputs)

    def call(tensors: Sequence[torch.Tensor]) -> Any:
        return select_output(module(**dict(zip(names, tensors, strict=True))), case.output)

    inputs = tuple(built.inputs[name] for name in names)
    return Subject(test_id, CallModule(call, module).eval(), inputs)
