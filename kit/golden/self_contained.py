"""Whether a golden program is one self-contained file, judged before any runtime sees it.

``ckit golden check`` runs a vendor's program on the auditor's machine: it must reach nothing
outside the artifact directory. An ONNX tensor may keep its bytes in another file ("external
data", a ``location`` resolved against the model's directory, or the working directory for a
program loaded from bytes): read there, the auditor's own file becomes the program's weights.
The kit refuses such a program itself rather than trust each ONNX Runtime release to refuse it.
An ExecuTorch program is loaded from its bytes with no named-data map, so it reaches no file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kit.errors import EnvironmentProblem


def outside_references(program_format: str, data: bytes) -> list[str]:
    """What ``data`` (a program of ``program_format``) names outside itself: empty when it is
    self-contained. A program that does not parse names nothing (the runtime refuses it)."""
    if program_format != "onnx":
        return []
    return onnx_external_locations(data)


def onnx_external_locations(data: bytes) -> list[str]:
    """The ``location`` of every tensor of the ONNX model ``data`` that keeps its bytes in
    another file, wherever the tensor is (initializers, node attributes, subgraphs, functions)."""
    try:
        import onnx
    except ImportError:
        raise EnvironmentProblem(
            "golden check: cannot check .onnx programs for external data: the onnx package is "
            "not installed; install onnx") from None
    try:  # from bytes: no directory to load external data from, so none is read here
        model = onnx.load_model_from_string(data)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError: not ONNX, the runtime refuses it
        return []
    external = onnx.TensorProto.EXTERNAL
    return sorted({_location(tensor) for tensor in _model_tensors(model)
                   if tensor.data_location == external})


def _location(tensor: Any) -> str:
    named = {entry.key: entry.value for entry in tensor.external_data}
    return str(named.get("location", "?"))


def _model_tensors(model: Any) -> Iterator[Any]:
    yield from _graph_tensors(model.graph)
    for function in model.functions:
        for node in function.node:
            yield from _node_tensors(node)


def _graph_tensors(graph: Any) -> Iterator[Any]:
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield from (sparse.values, sparse.indices)
    for node in graph.node:
        yield from _node_tensors(node)


def _node_tensors(node: Any) -> Iterator[Any]:
    for attribute in node.attribute:
        if attribute.HasField("t"):
            yield attribute.t
        yield from attribute.tensors
        sparse = [attribute.sparse_tensor] if attribute.HasField("sparse_tensor") else []
        for item in [*sparse, *attribute.sparse_tensors]:
            yield from (item.values, item.indices)
        if attribute.HasField("g"):
            yield from _graph_tensors(attribute.g)
        for graph in attribute.graphs:
            yield from _graph_tensors(graph)
