"""simnpu's ``torch.compile`` backend, registered with dynamo as ``simnpu``.

A graph dynamo captures goes through AOTAutograd with PyTorch's core ATen decompositions; the
decomposed ATen graph then runs eagerly on simnpu tensors, each op through simnpu's own kernels
(``simnpu.executor``), as a device without a code generator of its own serves compile. The
package's ``torch_dynamo_backends`` entry point registers it: ``torch.compile(fn,
backend="simnpu")`` finds it without an import.

What dynamo hands it, honestly: a ``SimTensor`` is a Python wrapper subclass dynamo cannot trace
as a tensor (no ``__tensor_flatten__``), so dynamo breaks the user's graph at each op on one, runs
the op eagerly, and compiles the Python frames of simnpu's own kernels it enters instead: the
graphs this backend gets are those kernels' host computations (``aten::rsqrt`` on the host
tensor behind a SimTensor). The compile tier records it as graph breaks (``details.compile``); a
C++ PrivateUse1 backend's tensors (``vendors/cppnpu``) are traced as tensors. What PyTorch calls
with dispatch excluded (the per-op kernels, the generator's state) dynamo never traces
(``out_of_dynamos_sight``): it could not fake their tensors there.

Fault kind ``wrong_decomposition`` (``SIMNPU_FAULTS``, ``simnpu.faults``): the backend decomposes
the rule's op into the op followed by a wrong correction (its floating results off by
``magnitude``, relative, as ``wrong_small``): a decomposition whose formula is wrong. Eager calls
of the op stay right; only compiled graphs holding it are wrong. A rule naming
``compile::<op>`` (``compile::argmin``) of a kind acting before an op computes (``hang``, ``abort``,
``slow``...) acts as the backend compiles a graph holding ``aten::<op>``: ``hang`` is a compile
that never ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from simnpu import faults

BACKEND_NAME = "simnpu"

_F = TypeVar("_F", bound=Callable[..., Any])

#: Set while a wrong decomposition calls its own op: that inner call is the op itself.
_decomposing = threading.local()


def out_of_dynamos_sight(fn: _F) -> _F:
    """``fn``, which dynamo never traces, nor anything it calls: simnpu's Python that PyTorch
    calls with dispatch excluded (a per-op kernel, the generator's state), where dynamo, tracing
    a compiled caller, would take the frame for user code and fail to fake its real tensors.
    What ``torch._dynamo.disable`` does, told to the frame evaluator directly (torch's C
    extension, loaded with torch): importing dynamo costs every simnpu process 1.6 s."""
    from torch._C._dynamo.eval_frame import (
        _FrameAction,
        _FrameExecStrategy,
        set_code_exec_strategy,
    )

    skip = _FrameAction.SKIP
    set_code_exec_strategy(fn.__code__, _FrameExecStrategy(skip, skip))
    return fn


def simnpu_backend(graph: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
    """The dynamo backend: AOTAutograd, decomposed, run eagerly on simnpu's kernels."""
    from torch._dynamo.backends.common import aot_autograd

    compiler = aot_autograd(fw_compiler=_run_eagerly, decompositions=decompositions())
    return compiler(graph, example_inputs)


def _run_eagerly(graph: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    _fire_compile_faults(graph, example_inputs)
    # Out of dynamo's sight: the graph's run enters simnpu's Python (``__torch_dispatch__``)
    # wherever it holds a SimTensor, and dynamo would trace those frames as user code too.
    return torch._dynamo.disable(graph.forward)  # type: ignore[no-any-return]


def _fire_compile_faults(graph: torch.fx.GraphModule, example_inputs: list[Any]) -> None:
    """The rules naming ``compile::<op>`` of each ATen op the graph calls, fired before it is
    compiled (their tensor filters read the graph's example inputs)."""
    if not faults.active_rules():
        return
    tensors = [value for value in example_inputs if isinstance(value, torch.Tensor)]
    for packet in sorted({str(node.target._schema.name) for node in graph.graph.nodes
                          if isinstance(node.target, torch._ops.OpOverload)}):
        name = f"compile::{packet.removeprefix('aten::')}"
        rules = [rule for rule in faults.active_rules() if rule.matches_op(name, name)]
        faults.fire_before(rules, faults.Call(subjects=tensors, op_name=name))


def decompositions() -> dict[Any, Callable[..., Any]]:
    """PyTorch's core ATen decompositions, with the wrong ones the active fault rules plant."""
    from torch._decomp import core_aten_decompositions

    table: dict[Any, Callable[..., Any]] = dict(core_aten_decompositions())
    for rule in faults.active_rules():
        if rule.kind is faults.Kind.WRONG_DECOMPOSITION:
            for overload in _overloads(rule.op):
                table[overload] = _wrong_decomposition(overload, rule)
    return table


def _overloads(op: str) -> list[Any]:
    """The ATen overloads a rule's op names (``aten::add.Tensor``, or every ``aten::add``)."""
    packet_name, _, overload = op.removeprefix("aten::").partition(".")
    packet = getattr(torch.ops.aten, packet_name, None)
    if packet is None:
        return []
    names = [overload] if overload else packet.overloads()
    return [getattr(packet, name) for name in names if hasattr(packet, name)]


def _wrong_decomposition(overload: Any, rule: faults.FaultRule) -> Callable[..., Any]:
    def decomposed(*args: Any, **kwargs: Any) -> Any:
        if getattr(_decomposing, "active", False):
            return NotImplemented  # the op itself, inside its own decomposition
        _decomposing.active = True
        try:
            result = overload(*args, **kwargs)
        finally:
            _decomposing.active = False
        return faults.wrongly_decomposed(result, rule)

    return decomposed
