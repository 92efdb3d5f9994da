"""A ``FlowRun`` as evidence: a plain dict that the evidence file (``kit.evidence_file``) keeps.

The worker (the vendor's process) saves it; the kit's judge reads it back with
``from_evidence``, which trusts nothing: every field's type is checked, and a malformed
evidence raises ``kit.execution.EvidenceError``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypedDict

import torch

from kit.execution import EvidenceError
from kit.flows.interface import FlowRun, Lowered, Stage

FIELDS = frozenset({"flow", "stage", "outputs", "program", "timings", "error", "cached"})
PROGRAM_FIELDS = frozenset({"data", "format", "delegated_ops", "undelegated_ops"})


class ProgramEvidence(TypedDict):
    """A ``Lowered`` program as evidence: its bytes as a uint8 tensor."""

    data: torch.Tensor
    format: str
    delegated_ops: int
    undelegated_ops: dict[str, int]


class FlowEvidence(TypedDict):
    """A ``FlowRun`` as the worker saves it (``FIELDS``)."""

    flow: str
    stage: str
    outputs: list[torch.Tensor] | None
    program: ProgramEvidence | None
    timings: dict[str, float]
    error: str
    cached: bool


def to_evidence(run: FlowRun) -> FlowEvidence:
    """``run`` as tensors, strings, numbers and plain containers only."""
    return {
        "flow": run.flow,
        "stage": str(run.stage),
        "outputs": None if run.outputs is None else [t.detach().cpu() for t in run.outputs],
        "program": None if run.program is None else _program_evidence(run.program),
        "timings": {str(k): float(v) for k, v in run.timings.items()},
        "error": run.error,
        "cached": run.cached,
    }


def from_evidence(data: Any) -> FlowRun:
    """The ``FlowRun`` a worker saved; ``EvidenceError`` for anything malformed."""
    fields = _record(data, FIELDS, "flow evidence")
    outputs = fields["outputs"]
    if outputs is not None and not _tensor_list(outputs):
        raise _malformed("outputs is not a list of tensors")
    return FlowRun(
        flow=_str(fields["flow"], "flow"),
        stage=_stage(fields["stage"]),
        outputs=None if outputs is None else tuple(outputs),
        program=None if fields["program"] is None else _program(fields["program"]),
        timings=_timings(fields["timings"]),
        error=_str(fields["error"], "error"),
        cached=_bool(fields["cached"], "cached"),
    )


def _program_evidence(program: Lowered) -> ProgramEvidence:
    return {
        "data": torch.frombuffer(bytearray(program.data), dtype=torch.uint8)
        if program.data else torch.empty(0, dtype=torch.uint8),
        "format": program.format,
        "delegated_ops": program.delegated_ops,
        "undelegated_ops": dict(program.undelegated_ops),
    }


def _program(data: Any) -> Lowered:
    fields = _record(data, PROGRAM_FIELDS, "the program")
    raw = fields["data"]
    if not (isinstance(raw, torch.Tensor) and raw.dtype == torch.uint8 and raw.dim() == 1):
        raise _malformed("program.data is not a 1-d uint8 tensor")
    return Lowered(
        data=raw.contiguous().numpy().tobytes(),
        format=_str(fields["format"], "program.format"),
        delegated_ops=_count(fields["delegated_ops"], "program.delegated_ops"),
        undelegated_ops=_op_counts(fields["undelegated_ops"]),
    )


def _record(data: Any, expected: frozenset[str], what: str) -> Mapping[str, Any]:
    if not isinstance(data, dict):
        raise _malformed(f"{what} is not a dict (got {type(data).__name__})")
    if set(data) != expected:
        odd = sorted(map(str, set(data) ^ expected))
        raise _malformed(f"{what} has missing or unknown fields: {', '.join(odd)}")
    return data


def _stage(value: Any) -> Stage:
    try:
        return Stage(_str(value, "stage"))
    except ValueError:
        raise _malformed(f"stage {value!r} is not a stage") from None


def _timings(value: Any) -> dict[str, float]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and type(v) is float and math.isfinite(v) for k, v in value.items()
    ):
        raise _malformed("timings is not a mapping of stage names to seconds")
    return dict(value)


def _op_counts(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and type(v) is int and v >= 0 for k, v in value.items()
    ):
        raise _malformed("program.undelegated_ops is not a mapping of op names to counts")
    return dict(value)


def _tensor_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, torch.Tensor) for item in value)


def _str(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise _malformed(f"{name} is not a string (got {type(value).__name__})")
    return value


def _bool(value: Any, name: str) -> bool:
    if type(value) is not bool:
        raise _malformed(f"{name} is not a bool (got {type(value).__name__})")
    return value


def _count(value: Any, name: str) -> int:
    if type(value) is not int or value < 0:
        raise _malformed(f"{name} is not a count")
    return value


def _malformed(problem: str) -> EvidenceError:
    return EvidenceError(f"the worker's flow evidence is malformed: {problem}")
