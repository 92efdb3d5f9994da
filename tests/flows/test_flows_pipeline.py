"""Real subjects through the real backends with run_flow: what each stage leaves behind."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from flows_helpers import CumSum, DataDependentBranch, LinearRelu, eager_output, subject

from kit.flows import get_flow
from kit.flows.executorch_xnnpack import ExecutorchXnnpackFlow
from kit.flows.interface import Executable, FlowOptions, Lowered, Stage, Subject
from kit.flows.onnxruntime_cpu import OnnxRuntimeCpuFlow
from kit.flows.pipeline import run_flow

PROGRAM_FLOWS = ("executorch_xnnpack", "executorch_xnnpack_int8", "onnxruntime_cpu")
FORMATS = {"executorch_xnnpack": "pte", "executorch_xnnpack_int8": "pte", "onnxruntime_cpu": "onnx"}
#: Signal-to-quantization-noise ratio an int8 linear+relu reaches with ease (about 40 dB here).
INT8_SQNR_FLOOR_DB = 25.0


class ExplodingLowerFlow(ExecutorchXnnpackFlow):
    name = "exploding_lower"

    def lower(self, exported: Any, subject: Subject, options: FlowOptions) -> Any:
        raise RuntimeError("partitioner refused the graph\nsecond line never shown")


class CorruptProgramXnnpackFlow(ExecutorchXnnpackFlow):
    """Serializes a real program, then damages its header: the runtime must refuse it."""

    name = "corrupt_pte"

    def serialize(self, lowered: Any) -> Lowered:
        program = super().serialize(lowered)
        return Lowered(b"\x00" * 64 + program.data[64:], program.format, program.delegated_ops)


class CorruptProgramOnnxFlow(OnnxRuntimeCpuFlow):
    name = "corrupt_onnx"

    def serialize(self, lowered: Any) -> Lowered:
        program = super().serialize(lowered)
        return Lowered(b"not an onnx model", program.format, program.delegated_ops)


class FailingRuntimeFlow(ExecutorchXnnpackFlow):
    name = "failing_runtime"

    def load(self, data: bytes, options: FlowOptions) -> Executable:
        def execute(inputs: Any) -> Any:
            raise ValueError("the device lost the tensor")

        return execute


def sqnr_db(actual: torch.Tensor, expected: torch.Tensor) -> float:
    noise = (actual - expected).pow(2).mean()
    return float(10 * torch.log10(expected.pow(2).mean() / noise))


@pytest.mark.parametrize("name", PROGRAM_FLOWS)
def test_program_flow_runs_linear_relu_close_to_eager(name: str) -> None:
    item = subject(f"flows/test/linear_relu/{name}", LinearRelu)
    run = run_flow(get_flow(name), item, {})
    assert (run.stage, run.error, run.flow) == (Stage.RAN, "", name)
    assert run.program is not None and run.outputs is not None
    assert run.program.format == FORMATS[name]
    assert run.program.delegated_ops > 0
    assert dict(run.program.undelegated_ops) == {}
    assert set(run.timings) == {"export", "lower", "serialize", "load", "run"}
    assert not run.cached
    (actual,) = run.outputs
    expected = eager_output(item)
    assert actual.device.type == "cpu" and actual.dtype == torch.float32
    if get_flow(name).quantized:
        assert sqnr_db(actual, expected) >= INT8_SQNR_FLOOR_DB
    else:
        torch.testing.assert_close(actual, expected, atol=1e-5, rtol=1e-5)


def test_op_xnnpack_does_not_take_is_left_undelegated() -> None:
    item = subject("flows/test/cumsum/executorch_xnnpack", CumSum)
    run = run_flow(get_flow("executorch_xnnpack"), item, {})
    assert run.stage == Stage.RAN
    assert run.program is not None and run.outputs is not None
    assert run.program.delegated_ops == 0
    assert dict(run.program.undelegated_ops) == {"aten.cumsum.default": 1}
    torch.testing.assert_close(run.outputs[0], eager_output(item))


def test_module_that_cannot_be_exported_ends_in_export_fail() -> None:
    item = subject("flows/test/branch/executorch_xnnpack", DataDependentBranch)
    run = run_flow(get_flow("executorch_xnnpack"), item, {})
    assert run.stage == Stage.EXPORT_FAIL
    assert run.error.startswith(
        "GuardOnDataDependentSymNode: Could not guard on data-dependent expression"
    )
    assert "\n" not in run.error
    assert (run.program, run.outputs, set(run.timings)) == (None, None, {"export"})


def test_lowering_that_raises_ends_in_lower_fail() -> None:
    run = run_flow(ExplodingLowerFlow(), subject("flows/test/x/exploding", LinearRelu), {})
    assert run.stage == Stage.LOWER_FAIL
    assert run.error == "RuntimeError: partitioner refused the graph"
    assert set(run.timings) == {"export", "lower"}


@pytest.mark.parametrize("flow_class", [CorruptProgramXnnpackFlow, CorruptProgramOnnxFlow])
def test_corrupt_program_bytes_end_in_load_fail(flow_class: type[ExecutorchXnnpackFlow]) -> None:
    run = run_flow(flow_class(), subject("flows/test/x/corrupt", LinearRelu), {})
    assert run.stage == Stage.LOAD_FAIL
    assert run.error and "\n" not in run.error
    assert run.program is not None  # the program made is kept for the record
    assert run.outputs is None


def test_corrupt_bytes_are_refused_by_each_runtime_directly() -> None:
    for name in PROGRAM_FLOWS:
        with pytest.raises(Exception):  # noqa: B017 - each runtime raises its own type
            get_flow(name).load(b"\x00garbage\x00" * 8, {})


def test_runtime_that_raises_ends_in_run_fail() -> None:
    run = run_flow(FailingRuntimeFlow(), subject("flows/test/x/failing", LinearRelu), {})
    assert (run.stage, run.error) == (Stage.RUN_FAIL, "ValueError: the device lost the tensor")


def test_missing_execution_provider_is_a_load_fail_not_a_cpu_fallback() -> None:
    item = subject("flows/test/linear_relu/onnxruntime_cpu", LinearRelu)
    run = run_flow(get_flow("onnxruntime_cpu"), item,
                   {"execution_provider": "AcmeExecutionProvider"})
    assert run.stage == Stage.LOAD_FAIL
    assert run.error == (
        "RuntimeError: execution provider AcmeExecutionProvider is not available in onnxruntime"
    )


def test_eager_flow_has_no_program_stages() -> None:
    run = run_flow(get_flow("eager"), subject("flows/test/x/eager", LinearRelu), {})
    assert run.stage == Stage.LOWER_FAIL
    assert run.error.startswith("NotImplementedError: flow eager has no lower stage")
