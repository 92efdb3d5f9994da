"""Running one ATen op on simnpu: the single place every device computation goes through.

Two entry points lead here. Ops with a SimTensor argument arrive from ``__torch_dispatch__``
(after autograd and view/in-place tracking ran in the dispatcher); ops without one, such as
``empty``/``empty_strided`` for ``device="simnpu"``, arrive at the boxed PrivateUse1 fallback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from simnpu import faults, forks, gaps, kernels
from simnpu.tensor import DEVICE_TYPE, SimTensor, host, replace_metadata, sync_metadata

#: Ops that legitimately take tensors from two devices (transfers; CPU index tensors).
MIXED_DEVICE_OPS = frozenset(
    {
        "aten::copy_",
        "aten::_copy_from",
        "aten::_copy_from_and_resize",
        "aten::_to_copy",
        "aten::index",
        "aten::index_put",
        "aten::index_put_",
        "aten::_index_put_impl_",
    }
)

CPU = torch.device("cpu")


def _tensors(tree: Any) -> list[torch.Tensor]:
    leaves, _ = tree_flatten(tree)
    return [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]


def _to_host(value: Any) -> Any:
    if isinstance(value, SimTensor):
        value = value._data
    if isinstance(value, torch.Tensor) and value._is_zerotensor():
        # Autograd's known zeros (a forward-mode tangent, a second derivative) are efficient
        # zero tensors without memory; PyTorch materializes them before a backend kernel, and
        # the host kernels here run below that point: reading one as memory segfaults.
        return torch.zeros(value.shape, dtype=value.dtype)
    if isinstance(value, torch.device) and value.type == DEVICE_TYPE:
        return CPU
    return value


@functools.cache
def _device_position(func: Any) -> int | None:
    """Where the op's schema takes a ``device`` argument, if it does."""
    for index, argument in enumerate(func._schema.arguments):
        if argument.name == "device":
            return index
    return None


def _result_on_device(
    func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], inputs: Sequence[torch.Tensor]
) -> bool:
    """Whether the op's new tensors belong on simnpu (an explicit ``device`` argument decides)."""
    position = _device_position(func)
    device = None
    if position is not None:
        device = args[position] if position < len(args) else kwargs.get("device")
    if device is not None:
        return torch.device(device).type == DEVICE_TYPE
    return any(isinstance(t, SimTensor) for t in inputs)


def _check_same_device(func: Any, op_name: str, inputs: Sequence[torch.Tensor]) -> None:
    # Like CUDA: host tensors may only join device ops as 0-dim scalars, except in transfers.
    if func._schema.name in MIXED_DEVICE_OPS:
        return
    if not any(isinstance(t, SimTensor) for t in inputs):
        return
    for tensor in inputs:
        if not isinstance(tensor, SimTensor) and tensor.dim() > 0:
            raise RuntimeError(
                f"{op_name}: Expected all tensors to be on the same device, but found at least "
                f"two devices, {DEVICE_TYPE}:0 and {tensor.device}!"
            )


def _rewrite(
    result: Any, rewriters: Sequence[Callable[[torch.Tensor], torch.Tensor]], mutated: set[int]
) -> Any:
    """Apply result-corrupting faults; tensors the op wrote in place are corrupted in place."""

    def one(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            if id(value) in mutated:
                for rewrite in rewriters:
                    broken = rewrite(value)
                    if broken.dtype == value.dtype and broken.shape == value.shape:
                        value.copy_(broken)
                return value
            for rewrite in rewriters:
                value = rewrite(value)
            return value
        if isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)):
            scalar = torch.tensor(value, dtype=torch.float64 if isinstance(value, float) else None)
            for rewrite in rewriters:
                scalar = rewrite(scalar)
            return scalar.item()
        return value

    return tree_map(one, result)


def _wrap(result: Any, inputs: Sequence[torch.Tensor], on_device: bool) -> Any:
    originals = {id(host(t)): t for t in inputs}

    def one(value: Any) -> Any:
        if not isinstance(value, torch.Tensor):
            return value
        if id(value) in originals:  # in-place / out= result: the caller's own tensor
            return originals[id(value)]
        return SimTensor(value) if on_device else value

    return tree_map(one, result)


def _saturate(result: Any, wide: Any, mutated: set[int]) -> Any:
    """Clamp integer results where the widened recomputation says they overflowed."""
    leaves, spec = tree_flatten(result)
    wide_leaves, wide_spec = tree_flatten(wide)
    if spec != wide_spec:
        return result
    clamped = []
    for value, true_value in zip(leaves, wide_leaves, strict=True):
        if isinstance(value, torch.Tensor) and isinstance(true_value, torch.Tensor):
            fixed = faults.saturated(value, true_value)
            if id(value) in mutated and fixed is not value:
                value.copy_(fixed)
            else:
                value = fixed
        clamped.append(value)
    return tree_unflatten(clamped, spec)


def _recompute_wide(func: Any, host_args: Any, host_kwargs: Any) -> Any:
    """The op on widened copies of its integer inputs, or None where it cannot run that way.

    (An op taking an int64 index cannot take it as float64; such ops do not overflow anyway.)
    """
    wide_args, wide_kwargs = tree_map(faults.widen, (host_args, host_kwargs))
    try:
        return kernels.run(func, wide_args, wide_kwargs)
    except (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError):
        return None


def _with_faults(
    result: Any, rules: Sequence[faults.FaultRule], call: faults.Call, wide: Any
) -> Any:
    """Fire the rules that act on results, then poisoning (which outlives any rule)."""
    mutated = {id(t) for t in call.subjects}
    if rules:
        if not call.subjects:  # a factory: its outputs stand in for the inputs it lacks
            call = faults.Call(_tensors(result), call.arguments, call.op_name)
            faults.fire_before(rules, call)
        rewriters = [*faults.result_rewriters(rules, call),
                     *faults.gradient_rewriters(rules, call)]
        result = _rewrite(result, rewriters, mutated)
        if wide is not None:
            result = _saturate(result, wide, mutated)
    if faults.is_poisoned():
        result = _rewrite(result, [faults.garbage], mutated)
    if faults.is_half_poisoned():
        result = _rewrite(result, [faults.half_garbage], mutated)
    return result


def _fault_written(func: Any, host_args: Any, host_kwargs: Any,
                   rules: Sequence[faults.FaultRule], call: faults.Call) -> None:
    """The result faults on what an op returning nothing wrote in place: an in-place foreach op
    (``aten::_foreach_addcmul_``, a foreach optimizer's update of its state) computes the
    tensors of its ``Tensor(a!)[]`` argument, which are its results."""
    written = [value for argument, value in _bound(func, host_args, host_kwargs)
               if argument.alias_info is not None and argument.alias_info.is_write]
    tensors = _tensors(written)
    _rewrite(tensors, faults.result_rewriters(rules, call), {id(t) for t in tensors})


def _bound(func: Any, args: Any, kwargs: Any) -> list[tuple[Any, Any]]:
    """``(schema argument, value)`` of each argument the call gives, positional or keyword."""
    arguments = func._schema.arguments
    given = list(zip(arguments, args, strict=False))
    return given + [(a, kwargs[a.name]) for a in arguments[len(args):] if a.name in kwargs]


def _write_input(
    rules: Sequence[faults.FaultRule],
    call: faults.Call,
    inputs: Sequence[torch.Tensor],
    result: Any,
) -> None:
    """``write_input``: scribble over the first device input after computing a right result.

    Skipped when the result shares that input's memory (in-place, ``out=`` and view ops): the
    fault is an op corrupting an input it should only read, with its own result intact.
    """
    if not rules or not faults.fires(rules, faults.Kind.WRITE_INPUT, call):
        return
    first = next((host(t) for t in inputs if isinstance(t, SimTensor)), None)
    if first is None:
        return
    memory = first.untyped_storage().data_ptr()
    if any(out.untyped_storage().data_ptr() == memory for out in _tensors(result)):
        return
    faults.scribble(first)


def _kernel(func: Any, op_name: str, host_args: Any, host_kwargs: Any) -> Any:
    """simnpu's kernel; for an op a ``fallback`` fault took it from, the host's CPU kernel, as
    PyTorch's ``cpu_fallback`` would run it (no simnpu numerics)."""
    if faults.falls_back(op_name):
        return func(*host_args, **host_kwargs)
    return kernels.run(func, host_args, host_kwargs)


def execute(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    forks.use()
    op_name = kernels.qualified_name(func)
    if op_name == "aten::set_data":  # metadata, not computation: see ``replace_metadata``
        replace_metadata(*args)
        return None
    inputs = _tensors((args, kwargs))
    gaps.check_call(func, op_name, inputs, kwargs)
    _check_same_device(func, op_name, inputs)
    host_inputs = [host(t) for t in inputs]
    rules = faults.rules_for(func)
    call = faults.Call(host_inputs, kernels.bind(func, args, kwargs) if rules else {}, op_name)
    if rules and host_inputs:
        faults.fire_before(rules, call)
    host_args, host_kwargs = tree_map(_to_host, (args, kwargs))
    # Before the real run, which may write its inputs in place (``add_``).
    saturating = bool(host_inputs) and faults.fires(rules, faults.Kind.SATURATE, call)
    wide = _recompute_wide(func, host_args, host_kwargs) if saturating else None
    fresh = bool(host_inputs) and faults.fires(rules, faults.Kind.FRESH_RESULT, call)
    before = [t.clone() for t in host_inputs] if fresh else []
    limit = faults.drop_limit(rules, call) if rules and host_inputs else None
    if limit is not None:
        host_args, host_kwargs = tree_map(
            functools.partial(faults.dropped_past, limit=limit), (host_args, host_kwargs))
    if bool(host_inputs) and faults.fires(rules, faults.Kind.DROP_SCALAR, call):
        host_args, host_kwargs = faults.scalars_dropped(func, host_args, host_kwargs)
    if bool(host_inputs) and faults.fires(rules, faults.Kind.LOST_UPDATE, call):
        host_args, host_kwargs = faults.lost_updates(func, host_args, host_kwargs)
    result = faults.computed(rules, call, lambda: _kernel(func, op_name, host_args, host_kwargs))
    if fresh:
        result = faults.into_fresh(result, host_inputs, before)
    gaps.check_outputs(op_name, _tensors(result))
    result = _with_faults(result, rules, call, wide)
    if result is None and rules:
        _fault_written(func, host_args, host_kwargs, rules, call)
    _write_input(rules, call, inputs, result)
    for tensor in inputs:
        if isinstance(tensor, SimTensor):
            sync_metadata(tensor)  # an out= or resize_ op may have resized the payload
    return _wrap(result, inputs, _result_on_device(func, args, kwargs, inputs))


def fallback(keyset: torch._C.DispatchKeySet, func: Any, *args: Any, **kwargs: Any) -> Any:
    """The boxed PrivateUse1 fallback: ops with no SimTensor argument (factories)."""
    return execute(func, args, kwargs)


SimTensor.executor = staticmethod(execute)
