"""What simnpu honestly does not support, like a real NPU: the kit must see these as gaps.

- complex dtypes, anywhere;
- its matrix unit (mm, bmm, addmm, ...) takes float32, float16 and bfloat16, and integers (an
  exact integer datapath, as quantized inference needs), never float64;
- it has no FFT unit;
- only the strided layout (no sparse tensors).

Every refusal is a ``NotImplementedError`` whose message says "... not implemented for 'simnpu'".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

MATRIX_OPS = frozenset(
    {
        "aten::mm",
        "aten::bmm",
        "aten::addmm",
        "aten::baddbmm",
        "aten::addbmm",
        "aten::mv",
        "aten::addmv",
        "aten::dot",
    }
)
MATRIX_DTYPES = frozenset({torch.float32, torch.float16, torch.bfloat16, torch.uint8, torch.int8,
                           torch.int16, torch.int32, torch.int64})
FFT_PREFIXES = ("aten::_fft_", "aten::fft_")


def _refuse(op_name: str, what: str, why: str = "") -> NotImplementedError:
    reason = f" ({why})" if why else ""
    return NotImplementedError(f"{op_name}: {what} not implemented for 'simnpu'{reason}")


def check_call(
    func: Any, op_name: str, inputs: Sequence[torch.Tensor], kwargs: dict[str, Any]
) -> None:
    """Refuse a call simnpu cannot run, before any work is done."""
    packet = func._schema.name
    if packet.startswith(FFT_PREFIXES):
        raise _refuse(op_name, "FFT", "the device has no FFT unit")
    requested = kwargs.get("dtype")
    if isinstance(requested, torch.dtype) and requested.is_complex:
        raise _refuse(op_name, f"complex dtype {requested}")
    for tensor in inputs:
        if tensor.is_complex():
            raise _refuse(op_name, f"complex dtype {tensor.dtype}")
        if tensor.layout != torch.strided:
            raise _refuse(op_name, f"layout {tensor.layout}")
    if packet in MATRIX_OPS:
        for tensor in inputs:
            if tensor.dtype not in MATRIX_DTYPES:
                raise _refuse(
                    op_name,
                    f"dtype {tensor.dtype}",
                    "its matrix unit takes float32, float16, bfloat16 and integers",
                )


def check_outputs(op_name: str, outputs: Sequence[torch.Tensor]) -> None:
    """Refuse results simnpu could not hold (complex values, a sparse layout)."""
    for tensor in outputs:
        if tensor.is_complex():
            raise _refuse(op_name, f"complex dtype {tensor.dtype}")
        if tensor.layout != torch.strided:
            raise _refuse(op_name, f"layout {tensor.layout}")
