"""ExecuTorch with the XNNPACK delegate: fp32, and static per-channel int8 through pt2e.

Export -> ``to_edge_transform_and_lower`` with ``XnnpackPartitioner`` -> ``to_executorch`` ->
a ``.pte`` buffer, run by the ExecuTorch runtime. The int8 flow quantizes first with the XNNPACK
quantizer that ships with executorch (``prepare_pt2e``, calibration on the subject's inputs,
``convert_pt2e``) and re-exports the quantized module. executorch and torchao are imported when a
stage runs, never when the registry is read.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kit.flows.availability import first_missing
from kit.flows.interface import Executable, Flow, FlowOptions, Lowered, Subject
from kit.flows.options import unknown_option

if TYPE_CHECKING:
    import torch

#: The higher-order op through which an ExecuTorch graph calls a delegate's payload.
DELEGATE_CALL = "executorch_call_delegate"


class ExecutorchXnnpackFlow(Flow):
    name = "executorch_xnnpack"
    program_format = "pte"
    packages: tuple[str, ...] = ("executorch",)

    def unavailable_reason(self) -> str | None:
        return first_missing(self.packages, self.name)

    def option_problem(self, options: FlowOptions) -> str | None:
        return unknown_option(self.name, options, ())

    def lower(self, exported: Any, subject: Subject, options: FlowOptions) -> Any:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        from executorch.exir import to_edge_transform_and_lower

        return to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()])

    def serialize(self, lowered: Any) -> Lowered:
        delegated, undelegated = delegation_counts(lowered.exported_program().graph_module)
        program = lowered.to_executorch()
        return Lowered(bytes(program.buffer), "pte", delegated, undelegated)

    def load(self, data: bytes, options: FlowOptions) -> Executable:
        from executorch.runtime import Runtime

        return LoadedProgram(Runtime.get().load_program(data))


class ExecutorchXnnpackInt8Flow(ExecutorchXnnpackFlow):
    name = "executorch_xnnpack_int8"
    quantized = True
    packages = ("executorch", "torchao")

    def lower(self, exported: Any, subject: Subject, options: FlowOptions) -> Any:
        return super().lower(quantize_int8(exported, subject), subject, options)


class LoadedProgram:
    """A loaded ``.pte``'s forward method; holds the Program too, since a Method does not keep
    its Program (nor the bytes it was loaded from) alive."""

    def __init__(self, program: Any) -> None:
        self.program = program
        self.method = program.load_method("forward")

    def __call__(self, inputs: Sequence[torch.Tensor]) -> Sequence[torch.Tensor]:
        return list(self.method.execute(list(inputs)))


def quantize_int8(exported: Any, subject: Subject) -> Any:
    """Static per-channel symmetric int8: calibrated on ``subject.inputs``, then re-exported."""
    import torch
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    config = get_symmetric_quantization_config(is_per_channel=True)
    quantizer = XNNPACKQuantizer().set_global(config)
    prepared = prepare_pt2e(exported.module(), quantizer)
    with torch.no_grad():
        prepared(*subject.inputs)
    converted = convert_pt2e(prepared)
    return torch.export.export(converted, subject.inputs, strict=False)


def delegation_counts(graph_module: Any) -> tuple[int, dict[str, int]]:
    """Operator nodes inside XNNPACK delegates, and those left outside by operator name.

    A delegate call counts the call_function nodes of its payload's original graph; the
    ``getitem`` nodes that unpack a delegate's outputs are plumbing, not operators.
    """
    delegated = 0
    undelegated: Counter[str] = Counter()
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        if op_name(node.target) == DELEGATE_CALL:
            delegated += payload_op_count(getattr(graph_module, node.args[0].target))
        else:
            undelegated[op_name(node.target)] += 1
    return delegated, dict(sorted(undelegated.items()))


def payload_op_count(lowered_module: Any) -> int:
    graph = lowered_module.original_module.graph
    return sum(
        1
        for node in graph.nodes
        if node.op == "call_function" and node.target is not operator.getitem
    )


def op_name(target: Any) -> str:
    return str(getattr(target, "__name__", target))
