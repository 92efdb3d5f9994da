"""Flows: how a built model reaches the device, and the check that its output is right.

Here is ``eager``: the float32 module moved to the device with ``module.to(device)`` and called
under ``torch.no_grad()``. Which flows exist is the registry's (``kit.flows``); program flows
(ExecuTorch, ONNX Runtime) run through ``kit.flows.pipeline``; their ids
(``models/<source>/<model>/<flow>``) follow the same scheme.

Every flow compares with the same reference: a deep copy of the model built on the CPU, in the
case's reference dtype (float64 unless ``models.yaml`` says otherwise), with floating inputs
upcast. The output field the standard names for the model is judged by the model-tier
tolerance (a ``kit.numerics.criteria.Tolerance``, through ``kit.numerics.judging.assert_close``);
floating device results must stay float32.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import torch

from kit.errors import InputError
from kit.numerics.comparison import assert_same_dtype
from kit.numerics.judging import assert_close
from kit.outcomes import ResultMismatch
from kit.tiers.models.interface import BuiltModel, ModelCase

#: The dtype models are built and run in on the device.
DEVICE_DTYPE = torch.float32

#: A flow's device half: the compared output of ``built`` run on the device (a flow never
#: judges; ``judge_output`` does, in the kit's process).
FlowRun = Callable[[BuiltModel, ModelCase, str], Any]


def check_eager(built: BuiltModel, case: ModelCase, device: str) -> None:
    """Raise ``NumericMismatch``/``ResultMismatch`` unless the device matches the reference.

    The reference is computed first, from a copy: moving the module to the device changes it.
    """
    expected = reference_output(built, case)
    actual = eager_output(built, case, device)
    compare_outputs(actual, expected, case)


def judge_output(built: BuiltModel, case: ModelCase, actual: Any) -> None:
    """The kit half of every flow: ``actual`` against the reference of a freshly built model."""
    compare_outputs(actual, reference_output(built, case), case)


def reference_output(built: BuiltModel, case: ModelCase) -> Any:
    dtype = getattr(torch, case.reference_dtype)
    module = copy.deepcopy(built.module).to(dtype)
    result = call_module(module, map_tensors(built.inputs, lambda t: _upcast(t, dtype)))
    if not has_output(result, case.output):
        raise InputError(f"{case.test_id}: the model returns no output field {case.output!r}")
    return select_output(result, case.output)


def eager_output(built: BuiltModel, case: ModelCase, device: str) -> Any:
    module = built.module.to(device)
    result = call_module(module, map_tensors(built.inputs, lambda t: t.to(device)))
    if not has_output(result, case.output):
        raise ResultMismatch(f"the device result has no output field {case.output!r}")
    return select_output(result, case.output)


def compare_outputs(actual: Any, expected: Any, case: ModelCase) -> None:
    where = case.output or "output"
    for index, tensor in enumerate(floating_tensors(actual)):
        assert_same_dtype(tensor, DEVICE_DTYPE, f"{where} (floating result {index})")
    assert_close(actual, expected, case.tolerance, where)


def call_module(module: torch.nn.Module, inputs: Any) -> Any:
    with torch.no_grad():
        if isinstance(inputs, Mapping):
            return module(**inputs)
        return module(*inputs)


def has_output(result: Any, key: str | None) -> bool:
    if key is None:
        return True
    if isinstance(result, Mapping):
        return result.get(key) is not None
    return getattr(result, key, None) is not None


def select_output(result: Any, key: str | None) -> Any:
    """The compared part of a result: a field of a model output (``logits``) or all of it."""
    if key is None:
        return result
    return result[key] if isinstance(result, Mapping) else getattr(result, key)


def map_tensors(value: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, Mapping):
        return {key: map_tensors(item, fn) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        items = [map_tensors(item, fn) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def floating_tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value] if value.is_floating_point() else []
    if isinstance(value, Mapping):
        return [t for item in value.values() for t in floating_tensors(item)]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in floating_tensors(item)]
    return []


def _upcast(tensor: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return tensor.to(dtype) if tensor.is_floating_point() else tensor


#: The flows this tier runs through its own path, by name: their device halves. The flows that
#: exist are the registry's (``kit.flows.flow_names``).
FLOWS: dict[str, FlowRun] = {"eager": eager_output}
