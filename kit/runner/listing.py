"""``ckit run --list``: the tests a run would execute, each with the kit's decision about it.

The same plan and the same decisions as the run itself (``RunInputs.plan``, ``decided_by_kit``), so
the list says exactly what a run with these options would do, without starting a worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kit.errors import InputError
from kit.results import Status
from kit.runner.config import RunConfig
from kit.runner.decisions import decided_by_kit
from kit.runner.inputs import RunInputs, empty_plan_message, load_inputs

RUN, SKIPPED, NOT_APPLICABLE = "run", "skipped", "not-applicable"


@dataclass(frozen=True)
class PlannedTest:
    test_id: str
    #: ``run``, ``skipped`` (by a skip-manifest entry) or ``not-applicable`` (the kit's reason).
    decision: str
    #: Why, in words; for a test that runs, empty unless an expired entry matched it.
    why: str = ""
    #: The skip-manifest entry (its ``test`` pattern) that decided, or matched when expired.
    entry: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.test_id, "decision": self.decision, "why": self.why,
                "entry": self.entry}

    def text(self) -> str:
        return f"{self.decision:<15} {self.test_id}" + (f"  {self.why}" if self.why else "")


def planned_test(inputs: RunInputs, test_id: str) -> PlannedTest:
    decision = inputs.skips.decide(test_id, inputs.today)
    pattern = decision.entry.test if decision.entry else None
    settled = decided_by_kit(inputs, test_id)
    if settled is None:
        why = ""
        if decision.expired and decision.entry is not None:
            why = f"skip entry {pattern!r} expired on {decision.entry.expires}: runs anyway"
        return PlannedTest(test_id, RUN, why, pattern)
    if settled.status is Status.SKIPPED and decision.entry is not None:
        entry = decision.entry
        why = (f"by manifest entry {pattern!r}: {entry.reason} ({entry.tracking}, "
               f"expires {entry.expires})")
        return PlannedTest(test_id, SKIPPED, why, pattern)
    return PlannedTest(test_id, NOT_APPLICABLE, f"not applicable: {settled.message}")


def list_plan(config: RunConfig) -> list[PlannedTest]:
    """Every test a run with ``config`` would plan, in the order the run plans them."""
    inputs = load_inputs(config)
    test_ids = inputs.plan.tests
    if not test_ids:
        raise InputError(empty_plan_message(config))
    return [planned_test(inputs, test_id) for test_id in test_ids]
