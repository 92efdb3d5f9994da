"""The ``eager`` flow: the module run as it is on the device, with no program in between.

Eager subjects run through the tiers' own eager path (``kit.tiers.models.flows.eager_output``, the
unit tier's op calls); this class exists so that ``eager`` is a flow like the others in the
registry, in vendor profiles and in standards.
"""

from __future__ import annotations

from typing import Any

from kit.flows.interface import Executable, Flow, FlowOptions, Lowered, Subject

_NO_PROGRAM = (
    "flow eager has no {stage} stage: it runs the module as it is, through the tier's eager path"
)


class EagerFlow(Flow):
    name = "eager"
    program_format = None
    requires_delegation = False

    def unavailable_reason(self) -> str | None:
        return None

    def lower(self, exported: Any, subject: Subject, options: FlowOptions) -> Any:
        raise NotImplementedError(_NO_PROGRAM.format(stage="lower"))

    def serialize(self, lowered: Any) -> Lowered:
        raise NotImplementedError(_NO_PROGRAM.format(stage="serialize"))

    def load(self, data: bytes, options: FlowOptions) -> Executable:
        raise NotImplementedError(_NO_PROGRAM.format(stage="load"))
