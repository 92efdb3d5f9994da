"""cppnpu's ``torch.compile`` backend, registered with dynamo as ``cppnpu``.

The package's ``torch_dynamo_backends`` entry point registers it: ``torch.compile(fn,
backend="cppnpu")`` finds it without an import (``vendor.yaml`` claims it, ``compile_backends``).

A graph dynamo captures goes through AOTAutograd with PyTorch's core ATen decompositions; each
decomposed graph (the forward, and the backward where gradients are asked for) then runs op by op
on the device, each op dispatched as in eager mode: to the library's own kernel where it has one
(``add``, ``mul``, ``relu``, ``where``, ``index_select``: ``CPPNPU_FAULTS`` reaches compiled
graphs too) and to the CPU fallback otherwise. No code generation and no fusion: what a device
with a kernel library and no compiler of its own serves ``torch.compile`` with. A cppnpu tensor is
a C++ ``TensorImpl``, which dynamo traces as a tensor: the graph holds the whole traced function,
with no graph break on the device's account (unlike simnpu's Python wrapper tensor).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

BACKEND_NAME = "cppnpu"


def cppnpu_backend(graph: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
    """The dynamo backend: AOTAutograd, core ATen decompositions, each graph run on the device."""
    from torch._decomp import core_aten_decompositions
    from torch._dynamo.backends.common import aot_autograd

    compiler = aot_autograd(fw_compiler=_run_on_device,
                            decompositions=core_aten_decompositions())
    return compiler(graph, example_inputs)


def _run_on_device(graph: torch.fx.GraphModule, example_inputs: list[Any]
                   ) -> Callable[..., Any]:
    """The decomposed graph as it is: called, its ops dispatch on their tensors' device."""
    return graph.forward
