"""The evidence file: tensors and plain values a worker leaves for the kit's judge, without pickle.

A worker runs vendor code, so the judge reads its file as hostile input. The format holds data
only, and reading it runs nothing the file names:

    MAGIC | header length (8 bytes, little-endian) | header (JSON) | tensor bytes, in order
    (each tensor's first byte at a multiple of 64 from the file's start, zeros between)

The header is ``{"tree": NODE, "tensors": [[dtype, shape, nbytes], ...]}``. A ``NODE`` is an
object of one key: ``{"tensor": index}``, ``{"list": [NODE...]}``, ``{"tuple": [NODE...]}``,
``{"dict": [[NODE, NODE]...]}``, ``{"dtype": name}``, ``{"size": [int...]}``, ``{"complex":
[re, im]}`` or ``{"value": bool | int | float | str | null}``. Each tensor is stored dense,
in C order, and read back as a view of the file's bytes (no copy): a judge compares values,
shapes and dtypes, never the strides a worker's result had. Reading it costs a tenth of a
weights-only ``torch.load`` of the same evidence (a unit test's is a few kilobytes).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

MAGIC = b"CKITEVIDENCE1\n"
_LENGTH_BYTES = 8
#: Where each tensor's bytes start: a multiple of this (any dtype's alignment, a cache line).
_ALIGNMENT = 64
#: The dtypes a tensor of the evidence may have, by name.
DTYPES: dict[str, torch.dtype] = {
    str(dtype).removeprefix("torch."): dtype
    for dtype in (
        torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
        torch.float16, torch.bfloat16, torch.float32, torch.float64,
        torch.complex64, torch.complex128,
        *(getattr(torch, name) for name in ("uint16", "uint32", "uint64", "float8_e4m3fn",
                                            "float8_e5m2") if hasattr(torch, name)),
    )
}
_SCALARS = (bool, int, float, str, type(None))


class MalformedEvidence(ValueError):
    """The file is not evidence in this format, or breaks one of its rules."""


def write_evidence(path: Path, tree: Any) -> None:
    """Write ``tree`` (tensors in lists, tuples and dicts; plain leaves) to ``path``."""
    tensors: list[torch.Tensor] = []
    encoded = _encode(tree, tensors)
    dense = [_dense_bytes(tensor) for tensor in tensors]
    table = [[_dtype_name(t.dtype), list(t.shape), d.numel()] for t, d in zip(tensors, dense,
                                                                              strict=True)]
    header = json.dumps({"tree": encoded, "tensors": table}, separators=(",", ":")).encode()
    with open(path, "wb") as handle:
        written = handle.write(MAGIC + len(header).to_bytes(_LENGTH_BYTES, "little") + header)
        for data in dense:
            if data.numel():
                written += handle.write(bytes(_aligned(written) - written))
                written += handle.write(data.numpy().data)


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGNMENT) * _ALIGNMENT


def read_evidence(handle: io.BufferedIOBase, size: int) -> Any:
    """The tree a ``write_evidence`` file of ``size`` bytes holds; ``MalformedEvidence`` if
    anything in it breaks the format."""
    data = _read_exactly(handle, size)
    if data is None or not data.startswith(MAGIC):
        raise MalformedEvidence("not a ckit evidence file")
    start = len(MAGIC) + _LENGTH_BYTES
    length = int.from_bytes(data[len(MAGIC):start], "little")
    if start + length > size:
        raise MalformedEvidence("the header runs past the end of the file")
    try:
        header = json.loads(bytes(data[start:start + length]))
    except (ValueError, RecursionError):
        raise MalformedEvidence("the header is not JSON") from None
    if not isinstance(header, dict) or set(header) != {"tree", "tensors"}:
        raise MalformedEvidence("the header is not {tree, tensors}")
    tensors = _tensors(header["tensors"], data, start + length)
    try:
        return _decode(header["tree"], tensors)
    except RecursionError:
        raise MalformedEvidence("the tree is nested too deep") from None


def _read_exactly(handle: io.BufferedIOBase, size: int) -> bytearray | None:
    """The file's ``size`` bytes read straight into the buffer the tensors will view (one copy:
    a scale test's evidence is hundreds of megabytes); None when it holds more or fewer."""
    data = bytearray(size)
    view = memoryview(data)
    filled = 0
    while filled < size:
        got = handle.readinto(view[filled:])
        if not got:
            return None
        filled += got
    view.release()
    return None if handle.read(1) else data


def _encode(value: Any, tensors: list[torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return {"tensor": len(tensors) - 1}
    if isinstance(value, torch.Size):
        return {"size": list(value)}
    if isinstance(value, list):
        return {"list": [_encode(item, tensors) for item in value]}
    if isinstance(value, tuple):
        return {"tuple": [_encode(item, tensors) for item in value]}
    if isinstance(value, Mapping):
        return {"dict": [[_encode(k, tensors), _encode(v, tensors)] for k, v in value.items()]}
    if isinstance(value, torch.dtype):
        return {"dtype": _dtype_name(value)}
    if isinstance(value, complex):
        return {"complex": [value.real, value.imag]}
    if isinstance(value, _SCALARS):
        return {"value": value}
    raise TypeError(f"evidence cannot hold a {type(value).__name__}")


def _dtype_name(dtype: torch.dtype) -> str:
    name = str(dtype).removeprefix("torch.")
    if name not in DTYPES:
        raise TypeError(f"evidence cannot hold a tensor of {dtype}")
    return name


def _dense_bytes(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor's elements, dense and in C order, as bytes (a uint8 tensor on the CPU)."""
    if tensor.layout != torch.strided:
        raise TypeError(f"evidence cannot hold a {tensor.layout} tensor")
    plain = tensor.detach().cpu().resolve_conj().resolve_neg().contiguous().reshape(-1)
    if not plain.numel():
        return torch.empty(0, dtype=torch.uint8)
    if plain.stride(0) != 1:  # one element keeps any stride through contiguous() and reshape
        plain = torch.empty_like(plain, memory_format=torch.contiguous_format).copy_(plain)
    return plain.view(torch.uint8)


def _tensors(table: Any, data: bytearray, offset: int) -> list[torch.Tensor]:
    if not isinstance(table, list):
        raise MalformedEvidence("the tensor table is not a list")
    tensors = []
    for entry in table:
        dtype, shape, nbytes = _tensor_entry(entry)
        if nbytes:
            offset = _aligned(offset)
        if offset + nbytes > len(data):
            raise MalformedEvidence("a tensor runs past the end of the file")
        if nbytes:
            flat = torch.frombuffer(data, dtype=dtype, count=nbytes // dtype.itemsize,
                                    offset=offset)
            tensors.append(flat.view(shape))
        else:
            tensors.append(torch.empty(shape, dtype=dtype))
        offset += nbytes
    if offset != len(data):
        raise MalformedEvidence("bytes follow the last tensor")
    return tensors


def _tensor_entry(entry: Any) -> tuple[torch.dtype, list[int], int]:
    if not (isinstance(entry, list) and len(entry) == 3 and entry[0] in DTYPES):
        raise MalformedEvidence("a tensor entry is not [dtype, shape, nbytes]")
    dtype, shape, nbytes = DTYPES[entry[0]], entry[1], entry[2]
    if not (isinstance(shape, list) and all(_is_count(n) for n in shape) and _is_count(nbytes)):
        raise MalformedEvidence("a tensor's shape or size is not made of counts")
    if math.prod(shape) * dtype.itemsize != nbytes:
        raise MalformedEvidence("a tensor's size does not match its shape and dtype")
    return dtype, shape, nbytes


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _decode(node: Any, tensors: list[torch.Tensor]) -> Any:
    if not (isinstance(node, dict) and len(node) == 1):
        raise MalformedEvidence("a node is not an object of one key")
    ((kind, body),) = node.items()
    if kind == "tensor" and type(body) is int and 0 <= body < len(tensors):
        return tensors[body]
    if kind in ("list", "tuple") and isinstance(body, list):
        items = [_decode(item, tensors) for item in body]
        return items if kind == "list" else tuple(items)
    if kind == "dict" and isinstance(body, list):
        return dict(_decode_pair(pair, tensors) for pair in body)
    if kind == "dtype" and body in DTYPES:
        return DTYPES[body]
    if kind == "size" and isinstance(body, list) and all(_is_count(n) for n in body):
        return torch.Size(body)
    if kind == "complex" and isinstance(body, list) and len(body) == 2 and all(
            type(part) in (int, float) for part in body):
        return complex(body[0], body[1])
    if kind == "value" and isinstance(body, _SCALARS):
        return body
    raise MalformedEvidence(f"a node of kind {kind!r} is malformed")


def _decode_pair(pair: Any, tensors: list[torch.Tensor]) -> tuple[Any, Any]:
    if not (isinstance(pair, list) and len(pair) == 2):
        raise MalformedEvidence("a dict entry is not [key, value]")
    key = _decode(pair[0], tensors)
    try:
        hash(key)
    except TypeError:
        raise MalformedEvidence("a dict key is not hashable") from None
    return key, _decode(pair[1], tensors)
