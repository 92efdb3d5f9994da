"""Flow evidence: what the vendor's process saves and the kit's judge reads back, trusting
nothing. Each malformed evidence is named after the forgery it tries."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from flows_helpers import LinearRelu, subject

from kit.execution import EvidenceError, load_evidence, save_evidence
from kit.flows import get_flow
from kit.flows.evidence import from_evidence, to_evidence
from kit.flows.interface import FlowRun, Lowered, Stage
from kit.flows.pipeline import run_flow

PROGRAM = Lowered(bytes(range(256)) * 3, "pte", 5,
                  {"aten.cumsum.default": 2, "aten.sin.default": 1})
RAN = FlowRun("executorch_xnnpack", Stage.RAN, (torch.ones(2, 3), torch.arange(4)), PROGRAM,
              {"export": 0.5, "lower": 1.25, "serialize": 0.1, "load": 0.01, "run": 0.001})


def through_file(tmp_path: Path, evidence: Any) -> Any:
    """The worker's save and the judge's weights-only load, as ``ckit run`` does them."""
    path = tmp_path / "evidence.bin"
    save_evidence(path, evidence)
    return load_evidence(path)


def assert_same_run(actual: FlowRun, expected: FlowRun) -> None:
    assert (actual.flow, actual.stage, actual.program, actual.error, actual.cached) == (
        expected.flow, expected.stage, expected.program, expected.error, expected.cached)
    assert dict(actual.timings) == dict(expected.timings)
    if expected.outputs is None:
        assert actual.outputs is None
    else:
        torch.testing.assert_close(actual.outputs, expected.outputs, atol=0, rtol=0)


def test_real_flow_run_round_trips_through_a_weights_only_file(tmp_path: Path) -> None:
    run = run_flow(get_flow("onnxruntime_cpu"),
                   subject("flows/test/linear_relu/onnxruntime_cpu", LinearRelu), {})
    assert run.stage == Stage.RAN
    back = from_evidence(through_file(tmp_path, to_evidence(run)))
    assert_same_run(back, run)
    assert isinstance(back.stage, Stage)


@pytest.mark.parametrize("run", [
    RAN,
    FlowRun("executorch_xnnpack_int8", Stage.LOAD_FAIL, None, PROGRAM, {"load": 0.2},
            "RuntimeError: bad header", cached=True),
    FlowRun("onnxruntime_cpu", Stage.EXPORT_FAIL, None, None, {"export": 0.3},
            "GuardOnDataDependentSymNode: no"),
    FlowRun("executorch_xnnpack", Stage.RAN, (), Lowered(b"", "pte", 0), {}),
], ids=["ran", "load-fail", "export-fail", "empty-program"])
def test_flow_run_round_trips(tmp_path: Path, run: FlowRun) -> None:
    assert_same_run(from_evidence(through_file(tmp_path, to_evidence(run))), run)


def forged(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    evidence = to_evidence(RAN)
    change(evidence)
    return evidence


def set_field(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda evidence: evidence.__setitem__(name, value)


def set_program_field(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda evidence: evidence["program"].__setitem__(name, value)


PREFIX = "the worker's flow evidence is malformed: "

ATTACKS: dict[str, tuple[Any, str]] = {
    "evidence_that_is_a_bare_tensor": (torch.zeros(3), "flow evidence is not a dict (got Tensor)"),
    "stage_forged_as_pass_word": (forged(set_field("stage", "PASSED")),
                                  "stage 'PASSED' is not a stage"),
    "stage_as_a_number": (forged(set_field("stage", 7)), "stage is not a string (got int)"),
    "missing_outputs_field": (forged(lambda e: e.pop("outputs")),
                              "flow evidence has missing or unknown fields: outputs"),
    "extra_verdict_field": (forged(set_field("verdict", "PASS")),
                            "flow evidence has missing or unknown fields: verdict"),
    "outputs_as_text": (forged(set_field("outputs", "all close")),
                        "outputs is not a list of tensors"),
    "program_bytes_as_floats": (forged(set_program_field("data", torch.zeros(4))),
                                "program.data is not a 1-d uint8 tensor"),
    "negative_delegated_count": (forged(set_program_field("delegated_ops", -1)),
                                 "program.delegated_ops is not a count"),
    "delegated_count_as_bool": (forged(set_program_field("delegated_ops", True)),
                                "program.delegated_ops is not a count"),
    "undelegated_counts_as_text": (
        forged(set_program_field("undelegated_ops", {"aten.sin.default": "1"})),
        "program.undelegated_ops is not a mapping of op names to counts"),
    "timing_as_infinity": (forged(lambda e: e["timings"].__setitem__("run", float("inf"))),
                           "timings is not a mapping of stage names to seconds"),
    "cached_as_an_int": (forged(set_field("cached", 1)), "cached is not a bool (got int)"),
    "program_missing_its_format": (forged(lambda e: e["program"].pop("format")),
                                   "the program has missing or unknown fields: format"),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_malformed_flow_evidence_is_refused(tmp_path: Path, attack: str) -> None:
    evidence, problem = ATTACKS[attack]
    with pytest.raises(EvidenceError) as raised:
        from_evidence(through_file(tmp_path, evidence))
    assert str(raised.value) == PREFIX + problem
