"""Judging a model's training step (``.../train``): which quantity, which parameter, is off.

The device's evidence (``kit.tiers.models.training.device_training``) is checked for shape
first: the loss a float32 tensor, each per-parameter quantity a mapping of the trained
parameters' names to float32 tensors, the same names the reference trains. Then, in
``QUANTITIES`` order (loss, gradient, SGD-updated, AdamW-updated), every value is judged under
the standard's training budget; the first quantity with a value off fails the test, naming the
first parameter off in module registration order (layer order) and the last: the backward pass
carries a wrong gradient from the layer that made it towards the inputs, so the parameters off
run from the first layers to the one nearest the fault, the last off. The record keeps the
parameters off of that quantity (``details.training``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from kit.errors import InputError
from kit.json_shape import RecordDetails
from kit.numerics.comparison import assert_same_dtype
from kit.numerics.training import QUANTITIES, QUANTITY_WORDS, TrainingBudget
from kit.outcomes import NumericMismatch, ResultMismatch
from kit.standard import Standard
from kit.tiers.models.flows import DEVICE_DTYPE
from kit.tiers.models.interface import BuiltModel, ModelCase
from kit.tiers.models.training import PER_PARAMETER, reference_training

#: ``details.failure`` of a step whose device trained other parameters than the model has.
OTHER_PARAMETERS = "other-parameters"
#: How many off parameters a record names (the count is always whole).
NAMED_OFF = 20


class TrainingMismatch(NumericMismatch):
    """A training step's quantity off its budget: the first parameter off in layer order."""

    def __init__(
        self, quantity: str, off: list[tuple[str, NumericMismatch]], parameters: int
    ) -> None:
        first_name, first = off[0]
        super().__init__(first.worst, first.measurements)
        self.quantity = quantity
        self.off = [name for name, _ in off]
        self.parameters = parameters
        words = QUANTITY_WORDS[quantity]
        if quantity == "loss":
            summary = "the loss is off"
        else:
            summary = (
                f"the {words} of {first_name} is off first in layer order "
                f"({len(off)} of {parameters} parameters off, the last {off[-1][0]})"
            )
        self.args = (f"{summary}: {first}",)

    def details(self) -> RecordDetails:
        per_parameter = self.quantity != "loss"
        return {
            **super().details(),
            "training": {
                "quantity": self.quantity,
                "first_off": self.off[0] if per_parameter else None,
                "last_off": self.off[-1] if per_parameter else None,
                "off": len(self.off) if per_parameter else 0,
                "off_parameters": self.off[:NAMED_OFF] if per_parameter else [],
                "parameters": self.parameters,
            },
        }


def judge_training(
    standard: Standard, built: BuiltModel, case: ModelCase, evidence: Any
) -> RecordDetails:
    """Raise the first quantity's failure unless the device's step meets the budget."""
    budget = standard.training
    if budget is None:
        raise InputError(f"{case.test_id}: standard {standard.version} has no training budget")
    actual = _checked(evidence)
    expected = reference_training(built, case, actual["gradient"])
    _same_parameters(actual, expected)
    for quantity in QUANTITIES:
        _judge_quantity(budget, quantity, actual[quantity], expected[quantity])
    return {}


def _judge_quantity(budget: TrainingBudget, quantity: str, actual: Any, expected: Any) -> None:
    criterion = budget.criterion(quantity)
    words = QUANTITY_WORDS[quantity]
    per_parameter = quantity in PER_PARAMETER
    pairs = (
        [(name, actual[name], ref, f"{words} of {name}") for name, ref in expected.items()]
        if per_parameter
        else [("", actual, expected, words)]
    )
    off: list[tuple[str, NumericMismatch]] = []
    for name, value, reference, where in pairs:
        failure = criterion.judge(value, reference, where).failure
        if failure is not None:
            assert isinstance(failure, NumericMismatch)  # a tolerance fails only elementwise
            off.append((name, failure))
    if off:
        raise TrainingMismatch(quantity, off, len(pairs) if per_parameter else 0)


def _checked(evidence: Any) -> dict[str, Any]:
    """The evidence as the device's step must leave it, else a ``ResultMismatch``."""
    if not isinstance(evidence, Mapping) or set(evidence) != set(QUANTITIES):
        raise ResultMismatch(f"the training step's evidence is not a mapping of {QUANTITIES}")
    loss = evidence["loss"]
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise ResultMismatch("the training step's loss is not one value")
    assert_same_dtype(loss, DEVICE_DTYPE, "loss")
    for quantity in PER_PARAMETER:
        values = evidence[quantity]
        words = QUANTITY_WORDS[quantity]
        if not isinstance(values, Mapping) or not all(
            isinstance(name, str) and isinstance(value, torch.Tensor)
            for name, value in values.items()
        ):
            raise ResultMismatch(f"the training step's {words}s are not tensors by parameter name")
        for name, value in values.items():
            assert_same_dtype(value, DEVICE_DTYPE, f"{words} of {name}")
    return dict(evidence)


def _same_parameters(actual: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    """The device trained the parameters the reference trains: those with a gradient."""
    for quantity in PER_PARAMETER:
        missing = [name for name in expected[quantity] if name not in actual[quantity]]
        extra = [name for name in actual[quantity] if name not in expected[quantity]]
        if missing or extra:
            # A weight the model ties (an LM head sharing the embedding) that the device's
            # module.to() untied is trained there as two parameters: an extra name.
            words = QUANTITY_WORDS[quantity]
            raise ResultMismatch(
                f"the device trained other parameters than the model has: {words}s missing "
                f"{missing[:3]}, unexpected {extra[:3]} (a tied weight untied on the device?)",
                failure=OTHER_PARAMETERS,
            )
