"""Running one subject through one flow: the device half, stage by stage, never judging.

Each stage is timed, and the first one that raises ends the run in its failure stage with a
one-line error; a program that was made is kept on the ``FlowRun`` even when a later stage
fails. With a ``ProgramCache``, a cached program skips export, lowering and serialization.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import torch

from kit.flows.availability import one_line
from kit.flows.cache import ProgramCache
from kit.flows.interface import DEVICE_STAGES, FlowOptions, FlowRun, Lowered, Stage, Subject
from kit.flows.interface import Flow as FlowBase

if TYPE_CHECKING:
    from kit.flows.evidence import FlowEvidence

T = TypeVar("T")
_FAILURE: dict[str, Stage] = dict(DEVICE_STAGES)


class _StageFailed(Exception):
    def __init__(self, stage: Stage, error: str) -> None:
        super().__init__(error)
        self.stage = stage
        self.error = error


def run_flow(
    flow: FlowBase, subject: Subject, options: FlowOptions, cache: ProgramCache | None = None
) -> FlowRun:
    """``subject`` through ``flow``: ``Stage.RAN`` with CPU outputs, or the failing stage."""
    timings: dict[str, float] = {}
    cached = cache.get(subject.test_id, flow.name, options) if cache is not None else None
    program = cached
    try:
        if program is None:
            program = _make_program(flow, subject, options, timings)
            _keep(cache, subject, flow.name, options, program)
        outputs = _run_program(flow, program, subject, options, timings)
    except _StageFailed as failed:
        return FlowRun(flow.name, failed.stage, None, program, timings, failed.error,
                       cached is not None)
    return FlowRun(flow.name, Stage.RAN, outputs, program, timings, "", cached is not None)


def _make_program(
    flow: FlowBase, subject: Subject, options: FlowOptions, timings: dict[str, float]
) -> Lowered:
    exported = _stage("export", timings, lambda: export(subject))
    lowered = _stage("lower", timings, lambda: flow.lower(exported, subject, options))
    program = _stage("serialize", timings, lambda: flow.serialize(lowered))
    if not isinstance(program, Lowered):
        raise _StageFailed(Stage.SERIALIZE_FAIL, f"serialize returned {type(program).__name__}, "
                           "not a Lowered program")
    return program


def _keep(
    cache: ProgramCache | None, subject: Subject, flow: str, options: FlowOptions, program: Lowered
) -> None:
    # The cache only saves time: a full or read-only disk must not fail the subject.
    if cache is None:
        return
    try:
        cache.put(subject.test_id, flow, options, program)
    except OSError:
        pass


def _run_program(
    flow: FlowBase, program: Lowered, subject: Subject, options: FlowOptions,
    timings: dict[str, float],
) -> tuple[torch.Tensor, ...]:
    executable = _stage("load", timings, lambda: flow.load(program.data, options))
    return _stage("run", timings, lambda: cpu_outputs(executable(subject.inputs)))


def flow_evidence(flow_name: str, subject: Subject, options: FlowOptions) -> FlowEvidence:
    """The device half of a test through a flow (the flows and models tiers alike): the subject
    through the flow with the vendor's options, as the evidence the judge reads."""
    from kit.flows import get_flow
    from kit.flows.evidence import to_evidence

    return to_evidence(run_flow(get_flow(flow_name), subject, options, program_cache()))


def program_cache() -> ProgramCache:
    """The run's program cache (quantized programs are not re-lowered on a re-run)."""
    from kit.flows.cache import default_cache_root
    from kit.hashing import kit_digest

    return ProgramCache(default_cache_root(), kit_digest())


def export(subject: Subject) -> Any:
    """``torch.export`` of the subject with its example inputs, in eval mode."""
    return torch.export.export(subject.module.eval(), subject.inputs, strict=False)


def cpu_outputs(result: Any) -> tuple[torch.Tensor, ...]:
    """A program's outputs flattened in order, as detached CPU copies (the runtime may reuse
    its buffers)."""
    return tuple(tensor.detach().to("cpu", copy=True) for tensor in _tensors(result))


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _tensors(item)
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        for item in value:
            yield from _tensors(item)
    else:
        raise TypeError(f"the program returned a {type(value).__name__}, not tensors")


def _stage(name: str, timings: dict[str, float], step: Callable[[], T]) -> T:
    start = time.perf_counter()
    try:
        return step()
    except Exception as exc:  # noqa: BLE001 - every stage's failure is a fact to record
        raise _StageFailed(_FAILURE[name], one_line(exc)) from None
    finally:
        timings[name] = time.perf_counter() - start
