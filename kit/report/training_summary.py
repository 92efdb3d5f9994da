"""The model tier's training steps as readers see them (``ckit show``, summary.md, the portal).

Derived from the records alone (the ids ``models/<source>/<model>/train`` and a failure's
``details.training``), so every report of a standard with training steps shows them and a
report without them shows nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kit.errors import InputError
from kit.report.id_order import natural_id_key
from kit.results import TestRecord
from kit.test_ids import TestId
from kit.tiers.models.segments import TRAIN
from kit.tiers.models.tier import ModelsTier

#: How a failure's ``details.training.quantity`` reads.
_QUANTITY_WORDS = {
    "loss": "the loss",
    "gradient": "gradient",
    "sgd": "SGD-updated value",
    "adamw": "AdamW-updated value",
}


@dataclass(frozen=True)
class TrainingStep:
    """One model's training-step record."""

    test_id: str
    status: str
    #: Which quantity went off first and where, in words; empty unless the judge said.
    first_off: str

    @property
    def model(self) -> str:
        """``models/hf/llama`` of ``models/hf/llama/train``."""
        return TestId.split(self.test_id).parent

    @property
    def passed(self) -> bool:
        return self.status == "PASS"


def is_training_step(test_id: str) -> bool:
    try:
        parsed = TestId.split(test_id)
    except InputError:
        return False
    return parsed.tier == ModelsTier.name and parsed.segments[-1:] == (TRAIN,)


def training_steps(records: Iterable[Mapping[str, Any]]) -> tuple[TrainingStep, ...]:
    """The training-step records of a report document's ``records`` (the renderers of
    report.json's own bytes), by id."""
    steps = [
        TrainingStep(str(r["id"]), str(r["status"]), first_off_text(r.get("details")))
        for r in records
        if is_training_step(str(r["id"]))
    ]
    return tuple(sorted(steps, key=lambda step: natural_id_key(step.test_id)))


def training_steps_of(records: Iterable[TestRecord]) -> tuple[TrainingStep, ...]:
    """The training-step records among a typed report's (``Report.records``), by id."""
    steps = [
        TrainingStep(r.id, r.status.value, first_off_text(r.details))
        for r in records
        if is_training_step(r.id)
    ]
    return tuple(sorted(steps, key=lambda step: natural_id_key(step.test_id)))


def first_off_text(details: Any) -> str:
    """``AdamW-updated value of model.norm.weight (first of 27 parameters off)``, ``the loss``."""
    training = details.get("training") if isinstance(details, Mapping) else None
    if not isinstance(training, Mapping):
        return ""
    quantity = _QUANTITY_WORDS.get(str(training.get("quantity")), "")
    first, off = training.get("first_off"), training.get("off")
    if not quantity or not isinstance(first, str):
        return quantity
    return f"{quantity} of {first} (first of {off} parameter(s) off)"


def passed_words(steps: tuple[TrainingStep, ...]) -> str:
    """``11 of 12 passed``."""
    passed = sum(1 for step in steps if step.passed)
    return f"{passed} of {len(steps)} passed"
