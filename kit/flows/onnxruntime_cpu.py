"""ONNX Runtime: ``torch.onnx.export(..., dynamo=True)`` and an ``InferenceSession``.

The CPU execution provider by default; a vendor names its own with the ``execution_provider``
option. Every node of the ONNX graph is assigned to the session's provider, so all count as
delegated. onnxruntime, onnx and onnxscript are imported when a stage runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kit.flows.availability import first_missing
from kit.flows.interface import Executable, Flow, FlowOptions, Lowered, Subject
from kit.flows.options import unknown_option

if TYPE_CHECKING:
    import torch

DEFAULT_PROVIDER = "CPUExecutionProvider"
OPTIONS = ("execution_provider",)


class OnnxRuntimeCpuFlow(Flow):
    name = "onnxruntime_cpu"
    program_format = "onnx"

    def unavailable_reason(self) -> str | None:
        return first_missing(("onnxruntime", "onnx", "onnxscript"), self.name)

    def option_problem(self, options: FlowOptions) -> str | None:
        problem = unknown_option(self.name, options, OPTIONS)
        provider = options.get("execution_provider", DEFAULT_PROVIDER)
        if problem is None and not (isinstance(provider, str) and provider):
            return f"flow {self.name}: option execution_provider must be a provider's name"
        return problem

    def lower(self, exported: Any, subject: Subject, options: FlowOptions) -> Any:
        import torch

        return torch.onnx.export(exported, subject.inputs, dynamo=True, verbose=False)

    def serialize(self, lowered: Any) -> Lowered:
        proto = lowered.model_proto
        return Lowered(proto.SerializeToString(), "onnx", len(proto.graph.node), {})

    def load(self, data: bytes, options: FlowOptions) -> Executable:
        import onnxruntime
        import torch

        provider = str(options.get("execution_provider", DEFAULT_PROVIDER))
        # ONNX Runtime falls back to the CPU for a provider it lacks: never let that pass.
        if provider not in onnxruntime.get_available_providers():
            raise RuntimeError(f"execution provider {provider} is not available in onnxruntime")
        session = onnxruntime.InferenceSession(data, providers=[provider])
        names = [item.name for item in session.get_inputs()]

        def execute(inputs: Sequence[torch.Tensor]) -> Sequence[torch.Tensor]:
            pairs = zip(names, inputs, strict=True)
            feed = {name: tensor.detach().cpu().numpy() for name, tensor in pairs}
            return [torch.from_numpy(array) for array in session.run(None, feed)]

        return execute
