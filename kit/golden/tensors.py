"""Tensors as files: raw little-endian bytes plus a JSON sidecar of dtype and shape."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    import torch

#: The dtypes an artifact may hold, by the name its sidecar gives.
DTYPE_NAMES = (
    "float64", "float32", "float16", "bfloat16",
    "int64", "int32", "int16", "int8", "uint8", "bool",
)
#: A sidecar's shape has at most this many dimensions, each at most this large.
MAX_RANK, MAX_DIM = 16, 1 << 31


def _dtype(name: str) -> torch.dtype:
    import torch

    if name not in DTYPE_NAMES:
        raise ValueError(f"dtype {name!r} is not one of {', '.join(DTYPE_NAMES)}")
    return getattr(torch, name)  # type: ignore[no-any-return]


def _refuse_big_endian() -> None:
    # Bytes are written as the host holds them; every platform the kit supports is little-endian.
    if sys.byteorder != "little":
        raise ValueError("golden artifacts are little-endian; this host is big-endian")


class TensorSidecar(TypedDict):
    """``<n>.json`` beside a tensor's ``<n>.bin``: how to read its bytes back."""

    dtype: str
    shape: list[int]


def tensor_bytes(tensor: torch.Tensor) -> tuple[bytes, TensorSidecar]:
    """The tensor's raw bytes (CPU, contiguous) and its sidecar."""
    import torch

    _refuse_big_endian()
    name = str(tensor.dtype).removeprefix("torch.")
    _dtype(name)
    flat = tensor.detach().to("cpu").contiguous().reshape(-1)
    data = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
    return data, {"dtype": name, "shape": list(tensor.shape)}


def _shape(value: Any) -> list[int]:
    if not isinstance(value, list) or len(value) > MAX_RANK:
        raise ValueError(f"shape must be a list of at most {MAX_RANK} sizes")
    if not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= MAX_DIM
               for d in value):
        raise ValueError("shape sizes must be non-negative integers")
    return value


def tensor_from(data: bytes, sidecar: Mapping[str, Any]) -> torch.Tensor:
    """The tensor a file and its sidecar hold; ``ValueError`` when they do not agree."""
    import torch

    _refuse_big_endian()
    if not isinstance(sidecar, Mapping) or set(sidecar) != {"dtype", "shape"}:
        raise ValueError("sidecar must hold exactly dtype and shape")
    dtype, shape = _dtype(str(sidecar["dtype"])), _shape(sidecar["shape"])
    count = 1
    for size in shape:
        count *= size
    itemsize = torch.empty((), dtype=dtype).element_size()
    if count * itemsize != len(data):
        raise ValueError(f"{len(data)} bytes do not hold {count} {sidecar['dtype']} elements")
    if count == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).view(dtype).reshape(shape)

