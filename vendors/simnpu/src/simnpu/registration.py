"""Registering simnpu with PyTorch as the PrivateUse1 backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

from simnpu import autocast, executor, faults, recurrent, runtime
from simnpu.compile_backend import out_of_dynamos_sight
from simnpu.tensor import DEVICE_TYPE


class _Hooks(torch._C._acc.PrivateUse1Hooks):
    def is_available(self) -> bool:
        return True

    def has_primary_context(self, device_index: int) -> bool:
        return True

    def is_built(self) -> bool:
        return True


class _DeviceGuard(torch._C._acc.DeviceGuard):
    def type_(self) -> torch._C._autograd.DeviceType:  # type: ignore[override]
        return torch._C._autograd.DeviceType.PrivateUse1


#: Ops PyTorch may call on a SimTensor while the Python key is excluded (``torch.tensor(...,
#: device=...)`` builds its result that way). They then reach PrivateUse1 directly, and a Python
#: kernel there only accepts Python-key tensors if registered per op, not as the fallback.
#: ``detach`` and ``alias`` are not among them: their generic C++ kernel detaches a SimTensor
#: through its own ``__torch_dispatch__``, and a Python kernel of theirs broke every fake simnpu
#: tensor dynamo makes of a view (``FakeTensor`` wraps a detached meta tensor, which must come
#: back from C++ with no Python object: ``arange(n, device=x.device)[:, None]`` in a traced
#: model recursed until Python's limit, so no Hugging Face text model compiled).
PYTHON_EXCLUDED_OPS = (
    "copy_",
    "_copy_from",
    "_copy_from_and_resize",
    "_to_copy",
    "lift_fresh",
    "lift_fresh_copy",
    "view",
    "clone",
    "fill_.Scalar",
    "zero_",
    "resize_",
    "set_.source_Tensor",
)

_KEY = torch._C.DispatchKey

#: Kept alive for the life of the process: dropping a library unregisters its kernels.
_libraries: list[torch.library.Library] = []


def _per_op_kernel(name: str) -> Callable[..., Any]:
    packet, _, overload = name.partition(".")
    op = getattr(getattr(torch.ops.aten, packet), overload or "default")

    # The dispatcher calls it with the Python key excluded (``PYTHON_EXCLUDED_OPS``).
    @out_of_dynamos_sight
    def kernel(*args: Any, **kwargs: Any) -> Any:
        return executor.execute(op, args, kwargs)

    return kernel


def device_kernel_ops() -> list[str]:
    """The ops simnpu registers a kernel of its own for, like a real backend: every ATen op
    with a CPU kernel (the executor runs it) and the fused recurrent cells CPU has none of
    (``simnpu.recurrent``), less those a ``fallback`` fault leaves to the
    boxed fallback. Not a CompositeImplicitAutograd op: a backend kernel would take its
    autograd (which it gets from its decomposition) away. Registered per op, so that PyTorch's
    dispatcher says truthfully which ops the device has (``torch._C.
    _dispatch_has_kernel_for_dispatch_key``); a SimTensor still reaches them through
    ``__torch_dispatch__`` first."""
    has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
    return [
        name.removeprefix("aten::")
        for name in torch._C._dispatch_get_all_op_names()
        if name.startswith("aten::")
        and name.removeprefix("aten::") not in PYTHON_EXCLUDED_OPS
        and (has_kernel(name, _KEY.CPU) or name in recurrent.KERNELS)
        and not has_kernel(name, _KEY.CompositeImplicitAutograd)
        and not faults.falls_back(name)
    ]


def register() -> None:
    """Rename PrivateUse1 to ``simnpu``, install ``torch.simnpu`` and the boxed fallback."""
    if _libraries:
        return
    current = torch._C._get_privateuse1_backend_name()
    if current not in ("privateuseone", DEVICE_TYPE):
        raise RuntimeError(
            f"simnpu: the PrivateUse1 device is already registered as {current!r} in this process"
        )
    _setup_privateuseone_for_python_backend(
        DEVICE_TYPE, backend_module=runtime, hook=_Hooks(), device_guard=_DeviceGuard()
    )
    fallback = torch.library.Library("_", "IMPL")
    fallback.fallback(executor.fallback, "PrivateUse1", with_keyset=True)
    per_op = torch.library.Library("aten", "IMPL")
    for name in (*PYTHON_EXCLUDED_OPS, *device_kernel_ops()):
        per_op.impl(name, _per_op_kernel(name), "PrivateUse1")
    _libraries.extend([fallback, per_op])
    autocast.register()
    # A simnpu tensor is a wrapper subclass, whose TensorImpl a CPU parameter's cannot take by
    # `param.data = moved`: without swapping, `module.to("simnpu")` makes a new Parameter per
    # module and unties shared weights (an embedding and its output layer would then train
    # apart). Swapping keeps each Parameter object, as set_data does on a real device.
    torch.__future__.set_swap_module_params_on_conversion(True)
