"""The reference runtime of each program format, on the CPU: what ``ckit golden check`` re-runs
a program with. ``pte``: ExecuTorch's Python runtime; ``onnx``: ONNX Runtime's CPU provider.

Kept to the kit's own small loaders so the check does not depend on how a flow lowered the
program: a vendor's flow may have produced it, and the reference runtime is the arbiter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kit.errors import EnvironmentProblem

if TYPE_CHECKING:
    import torch

#: Positional CPU tensors in, the program's flattened outputs back.
Program = Callable[[Sequence["torch.Tensor"]], list["torch.Tensor"]]


def _load_pte(data: bytes) -> Program:
    try:
        from executorch.runtime import Runtime  # type: ignore[import-untyped]
    except ImportError:
        raise EnvironmentProblem("executorch is not installed: cannot re-run .pte programs; "
                                 "pip install executorch") from None
    method = Runtime.get().load_program(data).load_method("forward")

    def run(inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        return [_tensor(value) for value in method.execute(list(inputs))]

    return run


def _load_onnx(data: bytes) -> Program:
    try:
        import onnxruntime  # type: ignore[import-untyped]
    except ImportError:
        raise EnvironmentProblem("onnxruntime is not installed: cannot re-run .onnx programs; "
                                 "pip install onnxruntime") from None
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # warnings from the graph optimizer are not the check's
    session = onnxruntime.InferenceSession(
        data, sess_options=options, providers=["CPUExecutionProvider"]
    )
    names = [graph_input.name for graph_input in session.get_inputs()]

    def run(inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        if len(inputs) != len(names):
            raise ValueError(f"the program takes {len(names)} inputs, {len(inputs)} are stored")
        feeds = {name: tensor.numpy() for name, tensor in zip(names, inputs, strict=True)}
        return [_tensor(value) for value in session.run(None, feeds)]

    return run


def _tensor(value: Any) -> torch.Tensor:
    import torch

    if isinstance(value, torch.Tensor):
        return value
    return torch.from_numpy(value) if hasattr(value, "dtype") else torch.tensor(value)


LOADERS: dict[str, Callable[[bytes], Program]] = {"pte": _load_pte, "onnx": _load_onnx}


def load_program(program_format: str, data: bytes) -> Program:
    """Load ``data`` into the reference runtime of ``program_format`` (``pte`` or ``onnx``)."""
    return LOADERS[program_format](data)
