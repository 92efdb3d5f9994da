"""The training step's budget: one ``Tolerance`` per quantity a model's step is judged on.

A standard that declares ``numerics.training`` in its ``standard.yaml`` gives every model of its
model tier a training-step test (``models/<source>/<model>/train``); one without it (v1) has
none. The quantities, in the order they are judged: the ``loss``, each parameter's
``gradient``, and each parameter after the ``sgd`` and the ``adamw`` steps (NUMERICS.md,
"Training step").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kit.config_reader import Node
from kit.numerics.criteria import Tolerance
from kit.numerics.parsing import read_tolerance

#: What a training step is judged on, in judging order; the last three are per parameter.
QUANTITIES = ("loss", "gradient", "sgd", "adamw")
#: The words a message names a quantity by.
QUANTITY_WORDS = {
    "loss": "loss",
    "gradient": "gradient",
    "sgd": "SGD-updated value",
    "adamw": "AdamW-updated value",
}


@dataclass(frozen=True)
class TrainingBudget:
    """Per quantity of ``QUANTITIES``, the tolerance its float32 device value is held to
    against the float64 reference."""

    tolerances: Mapping[str, Tolerance]

    def criterion(self, quantity: str) -> Tolerance:
        return self.tolerances[quantity]


def read_training_budget(numerics: Node) -> TrainingBudget | None:
    """``numerics.training`` (a tolerance per quantity), or None where the standard has none."""
    training = dict(numerics.entries()).get("training")  # read_numerics checked the keys
    if training is None:
        return None
    fields = training.section(QUANTITIES, what="a tolerance per training quantity")
    return TrainingBudget({quantity: read_tolerance(fields[quantity]) for quantity in QUANTITIES})
