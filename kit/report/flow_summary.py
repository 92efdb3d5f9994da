"""Per-flow totals of a run: how far subjects got, what the backends took, what it cost.

Built from the records' details (every flow record carries ``flow``, ``stage``,
``delegated_ops``, ``undelegated_ops``, ``undelegated_op_names``, ``lowering_s`` and
``program_bytes``, passing or not), so a verifier derives the same totals from the records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from kit.results import RecordFields

#: How many undelegated op names a flow's summary lists (the most frequent first).
TOP_UNDELEGATED = 10


def flow_summary(records: Sequence[RecordFields]) -> dict[str, FlowTotals]:
    """Per flow (sorted): counts per stage, op totals, the most frequent undelegated ops,
    total lowering seconds and program bytes, over the records that ran through it."""
    by_flow: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        details = record.details
        if isinstance(details.get("flow"), str) and isinstance(details.get("stage"), str):
            by_flow.setdefault(details["flow"], []).append(details)
    return {flow: _totals(flow, by_flow[flow]) for flow in sorted(by_flow)}


def _totals(flow: str, items: Sequence[Mapping[str, Any]]) -> FlowTotals:
    undelegated: Counter[str] = Counter()
    for item in items:
        names = item.get("undelegated_op_names")
        if isinstance(names, Mapping):
            undelegated.update({str(k): _count(v) for k, v in names.items()})
    top = sorted(undelegated.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_UNDELEGATED]
    return FlowTotals(
        flow=flow,
        stages=dict(sorted(Counter(str(i["stage"]) for i in items).items())),
        delegated_ops=sum(_count(i.get("delegated_ops")) for i in items),
        undelegated_ops=sum(_count(i.get("undelegated_ops")) for i in items),
        top_undelegated=tuple(top),
        lowering_s=round(sum(_seconds(i.get("lowering_s")) for i in items), 3),
        program_bytes=sum(_count(i.get("program_bytes")) for i in items),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _seconds(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    return float(value) if ok else 0.0


class UndelegatedJson(TypedDict):
    op: str
    count: int


class FlowTotalsJson(TypedDict):
    stages: dict[str, int]
    delegated_ops: int
    undelegated_ops: int
    top_undelegated: list[UndelegatedJson]
    lowering_s: float
    program_bytes: int


@dataclass(frozen=True)
class FlowTotals:
    """One flow's line of ``summary.flows``, typed (``kit.report.model.Report.flows``)."""

    flow: str
    stages: Mapping[str, int]
    delegated_ops: int
    undelegated_ops: int
    #: ``(op, count)``, the most frequent first.
    top_undelegated: tuple[tuple[str, int], ...]
    lowering_s: float
    program_bytes: int

    @property
    def total(self) -> int:
        return sum(self.stages.values())

    def to_json(self) -> FlowTotalsJson:
        return {
            "stages": dict(self.stages),
            "delegated_ops": self.delegated_ops,
            "undelegated_ops": self.undelegated_ops,
            "top_undelegated": [{"op": op, "count": n} for op, n in self.top_undelegated],
            "lowering_s": self.lowering_s,
            "program_bytes": self.program_bytes,
        }

    @classmethod
    def from_json(cls, flow: str, data: Mapping[str, Any]) -> FlowTotals:
        return cls(
            flow=flow,
            stages=dict(data["stages"]),
            delegated_ops=int(data["delegated_ops"]),
            undelegated_ops=int(data["undelegated_ops"]),
            top_undelegated=tuple((str(e["op"]), int(e["count"])) for e in data["top_undelegated"]),
            lowering_s=float(data["lowering_s"]),
            program_bytes=int(data["program_bytes"]),
        )
