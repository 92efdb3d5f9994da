"""The kit's judgement of one subject through one flow: its stage, then its numbers.

The device half (``kit.flows.pipeline.run_flow``) says how far the subject got. The judge, in
the kit's own process, decides on a reference it computed itself:

- ``EXPORT_FAIL``: ``torch.export`` of the kit's own subject failed: the kit's error, an ERROR;
- ``LOWER_FAIL`` .. ``RUN_FAIL``: ERROR, or UNSUPPORTED where the message says not implemented;
- a flow that must delegate, with nothing delegated: ``NOT_DELEGATED`` (never a pass);
- then the numbers: the flow's criterion (``kit.numerics.criteria``), a tolerance (float flows)
  or an SQNR floor (quantized flows).

Every record keeps the stage facts and the error statistics, passing or not; the statistics
are measured apart from the decision, so a passing record shows how close it came.

Shared by the tiers that run subjects through flows (``kit.tiers.flows``: op subjects;
``kit.tiers.models``: models), which import neither each other nor their own copy of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypedDict

import torch

from kit.errors import InputError
from kit.flows.evidence import from_evidence
from kit.flows.interface import FlowRun, Lowered, Stage
from kit.json_shape import RecordDetails
from kit.numerics.comparison import sqnr_db
from kit.numerics.criteria import Criterion
from kit.outcomes import KitOutcome, classify_exception
from kit.results import Status

#: How many undelegated op names a record keeps (the most frequent).
UNDELEGATED_KEPT = 20


class ArtifactKeeper(Protocol):
    """What a passing test's artifacts are kept by (``kit.golden.GoldenWriter`` under
    ``--golden``): declared here, since golden re-runs programs through the flows below it."""

    def save(self, test_id: str, flow: str, inputs: Sequence[torch.Tensor],
             reference_outputs: Sequence[torch.Tensor], program: Lowered | None) -> None: ...


class FlowVerdict(KitOutcome):
    """Anything but PASS for a flow record: its status, its one-line message, its facts."""

    def __init__(self, status: Status, message: str, details: Mapping[str, object]) -> None:
        super().__init__(message)
        self.status = status
        self.facts = details

    def details(self) -> RecordDetails:
        return dict(self.facts)


class StageFacts(TypedDict):
    """What every flow record carries about the stages, whatever its status."""

    flow: str
    stage: str
    delegated_ops: int
    undelegated_ops: int
    #: The most frequent ops left outside the backend, by name, with their counts.
    undelegated_op_names: dict[str, int]
    lowering_s: float
    program_bytes: int
    cached: bool


class ErrorStatistics(TypedDict):
    """A flow's outputs against the reference, over every element (None: not comparable)."""

    max_abs_err: float | None
    max_rel_err: float | None
    mse: float | None
    sqnr_db: float | None


def stage_facts(run: FlowRun, stage: Stage) -> StageFacts:
    """What every flow record carries about the stages, whatever its status."""
    program = run.program
    timings = run.timings
    lowering = sum(float(timings.get(name, 0.0)) for name in ("export", "lower", "serialize"))
    undelegated = dict(program.undelegated_ops) if program is not None else {}
    return {
        "flow": run.flow,
        "stage": stage.value,
        "delegated_ops": program.delegated_ops if program is not None else 0,
        "undelegated_ops": sum(undelegated.values()),
        "undelegated_op_names": _most_frequent(undelegated),
        "lowering_s": round(lowering, 6),
        "program_bytes": len(program.data) if program is not None else 0,
        "cached": run.cached,
    }


def _most_frequent(counts: dict[str, int]) -> dict[str, int]:
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return dict(ranked[:UNDELEGATED_KEPT])


def error_statistics(
    actual: Sequence[torch.Tensor], expected: Sequence[torch.Tensor]
) -> ErrorStatistics:
    """Max abs/rel error, mean squared error and SQNR (dB) over every output element."""
    pairs = [(a, e) for a, e in zip(actual, expected, strict=False) if a.shape == e.shape]
    if not pairs or len(pairs) != len(expected) or len(actual) != len(expected):
        return {"max_abs_err": None, "max_rel_err": None, "mse": None, "sqnr_db": None}
    a = torch.cat([x.detach().reshape(-1).to(torch.float64) for x, _ in pairs])
    e = torch.cat([y.detach().reshape(-1).to(torch.float64) for _, y in pairs])
    finite = torch.isfinite(a) & torch.isfinite(e)
    a, e = a[finite], e[finite]
    if a.numel() == 0:
        return {"max_abs_err": 0.0, "max_rel_err": 0.0, "mse": 0.0, "sqnr_db": None}
    diff = (a - e).abs()
    noise = float((diff**2).sum())
    signal = float((e**2).sum())
    return {
        "max_abs_err": float(diff.max()),
        "max_rel_err": float((diff / e.abs().clamp_min(torch.finfo(torch.float32).tiny)).max()),
        "mse": noise / a.numel(),
        "sqnr_db": sqnr_db(signal, noise),
    }


def decide(
    run: FlowRun,
    requires_delegation: bool,
    expected: Sequence[torch.Tensor],
    criterion: Criterion,
) -> RecordDetails:
    """The details of a PASS; raises ``FlowVerdict`` for every other outcome."""
    if run.stage is not Stage.RAN:
        raise _stage_failure(run)
    if requires_delegation and (run.program is None or run.program.delegated_ops == 0):
        details = stage_facts(run, Stage.NOT_DELEGATED)
        names = ", ".join(details["undelegated_op_names"]) or "none"
        raise FlowVerdict(Status.NOT_DELEGATED,
                          f"the backend of {run.flow} took no op (left outside: {names})", details)
    actual = tuple(run.outputs or ())
    statistics = error_statistics(actual, expected)
    problem = _numeric_problem(actual, expected, criterion)
    if problem is not None:
        failed = {**stage_facts(run, Stage.FAIL_NUMERIC), **statistics, **criterion.describe()}
        raise FlowVerdict(Status.FAIL_NUMERIC, problem, failed)
    return {**stage_facts(run, Stage.PASS), **statistics, **criterion.describe()}


def _stage_failure(run: FlowRun) -> FlowVerdict:
    details = {**stage_facts(run, run.stage), "error": run.error}
    if run.stage is Stage.EXPORT_FAIL:
        return FlowVerdict(Status.ERROR, f"kit error: torch.export of the kit's own subject "
                           f"failed ({run.error}); report it to the kit's maintainers", details)
    status = _failure_status(run.error)
    stage = run.stage.value.removesuffix("_FAIL").lower()
    return FlowVerdict(status, f"{run.flow}: {stage} failed: {run.error}", details)


def _failure_status(error: str) -> Status:
    # The device half leaves "ExcType: first line"; judged the way a raised exception is.
    kind, _, text = error.partition(": ")
    if kind == "NotImplementedError":
        return Status.UNSUPPORTED
    status = classify_exception(RuntimeError(text or kind))
    return Status.UNSUPPORTED if status is Status.UNSUPPORTED else Status.ERROR


def _numeric_problem(
    actual: Sequence[torch.Tensor], expected: Sequence[torch.Tensor], criterion: Criterion
) -> str | None:
    if len(actual) != len(expected):
        return f"the program returned {len(actual)} outputs, eager {len(expected)}"
    for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
        if a.shape != e.shape:
            return f"output {index}: shape {tuple(a.shape)}, eager {tuple(e.shape)}"
    return criterion.judge(tuple(actual), tuple(expected)).problem


def judge_run(
    test_id: str,
    flow_name: str,
    evidence: Any,
    inputs: tuple[torch.Tensor, ...],
    expected: tuple[torch.Tensor, ...],
    criterion: Criterion,
    golden: ArtifactKeeper | None = None,
    stored: tuple[torch.Tensor, ...] | None = None,
) -> RecordDetails:
    """The decision on a flow's evidence; after a PASS ``golden`` (if any) keeps the artifacts,
    with ``stored`` as the reference outputs (default: ``expected`` itself)."""
    from kit.flows import requires_delegation

    run: FlowRun = from_evidence(evidence)
    if run.flow != flow_name:
        raise InputError(f"the evidence is of flow {run.flow!r}, not {flow_name!r}")
    details = decide(run, requires_delegation(flow_name), expected, criterion)
    if golden is not None:
        golden.save(test_id, flow_name, inputs, expected if stored is None else stored,
                    run.program)
    return details
