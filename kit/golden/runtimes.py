"""The reference runtime of each program format, on the CPU: what ``ckit golden check`` re-runs
a program with. ``pte``: ExecuTorch's runtime; ``onnx``: ONNX Runtime's CPU provider.

Each is the ``load`` of the kit's built-in flow of that format (``kit.flows``), never the flow
that wrote the program: a vendor's flow may have lowered it, and the reference runtime is the
arbiter. Built-in names cannot be taken by a vendor's entry point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kit.errors import EnvironmentProblem

if TYPE_CHECKING:
    import torch

#: Positional CPU tensors in, the program's flattened outputs back.
Program = Callable[[Sequence["torch.Tensor"]], Sequence["torch.Tensor"]]

#: The built-in flow whose runtime re-runs each program format.
REFERENCE_FLOWS = {"pte": "executorch_xnnpack", "onnx": "onnxruntime_cpu"}


def load_program(program_format: str, data: bytes) -> Program:
    """Load ``data`` into the reference runtime of ``program_format`` (``pte`` or ``onnx``);
    ``EnvironmentProblem`` when that runtime is not installed here."""
    from kit.flows import get_flow

    flow = get_flow(REFERENCE_FLOWS[program_format])
    missing = flow.unavailable_reason()
    if missing is not None:
        raise EnvironmentProblem(f"cannot re-run .{program_format} programs: {missing}")
    return flow.load(data, {})
