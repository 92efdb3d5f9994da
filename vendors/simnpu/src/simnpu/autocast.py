"""simnpu's autocast: the policy a backend registers on ``AutocastPrivateUse1`` itself.

PyTorch registers no autocast kernel for PrivateUse1 (not even the fallthrough the other
backends get), so ``torch.autocast("simnpu")`` works only once the backend says, per op, in
which dtype it runs. simnpu follows PyTorch's CPU policy: the ops of ``LOWER_PRECISION`` run in
the autocast dtype, those of ``PROMOTE`` in the widest dtype of their inputs (starting from the
autocast dtype, as PyTorch's ``promote_type`` does), and every other op PyTorch's CPU autocast
names (``torch._C._dispatch_has_kernel_for_dispatch_key(op, AutocastCPU)``) in float32; any op
not named runs in its inputs' dtype (the fallthrough). Only floating simnpu tensors other than
float64 are cast, as on CPU.

The ``autocast_dtype`` fault (``simnpu.faults``) runs one op under the other policy: a
lower-precision op in float32, a float32 or promoting op in the autocast dtype.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._pytree import tree_flatten, tree_map

from simnpu import faults
from simnpu.tensor import DEVICE_TYPE

#: The lower-precision dtypes simnpu runs autocast in (``torch.simnpu.get_amp_supported_dtype``).
SUPPORTED_DTYPES = (torch.bfloat16,)

#: Ops run in the autocast dtype (PyTorch's CPU ``lower_precision_fp`` list).
LOWER_PRECISION = (
    "conv1d", "conv1d.padding", "conv2d", "conv2d.padding", "conv3d", "conv3d.padding",
    "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "addbmm", "linear",
    "_convolution.deprecated", "matmul", "conv_tbc", "mkldnn_rnn_layer", "conv_transpose1d",
    "conv_transpose2d.input", "conv_transpose3d.input", "prelu", "scaled_dot_product_attention",
    "_native_multi_head_attention", "_addmm_activation",
)
#: Ops run in the widest dtype of their floating inputs (PyTorch's CPU ``promote`` list).
PROMOTE = ("cat", "stack", "index_copy")

_KEY = torch._C.DispatchKey
# The stubs predate the key (torch has it since 2.1).
_AUTOCAST = torch._C.DispatchKeySet(_KEY.AutocastPrivateUse1)  # type: ignore[attr-defined]

#: Kept alive for the life of the process: dropping a library unregisters its kernels.
_libraries: list[torch.library.Library] = []


class Policy(enum.StrEnum):
    """Which dtype an op's floating inputs are cast to: the autocast dtype, float32, or the
    widest of theirs."""

    LOWER = "lower"
    FLOAT32 = "float32"
    PROMOTE = "promote"


def float32_ops() -> list[str]:
    """Every other op PyTorch's CPU autocast names: those run in float32."""
    named = set(LOWER_PRECISION) | set(PROMOTE)
    has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
    found = []
    for qualified in torch._C._dispatch_get_all_op_names():
        name = qualified.removeprefix("aten::").removesuffix(".default")
        if (qualified.startswith("aten::") and name not in named
                and has_kernel(qualified, _KEY.AutocastCPU)):
            found.append(name)
    return found


def _eligible(value: Any) -> bool:
    return (isinstance(value, torch.Tensor) and value.device.type == DEVICE_TYPE
            and value.is_floating_point() and value.dtype != torch.float64)


def _cast(dtype: torch.dtype, value: Any) -> Any:
    return value.to(dtype) if _eligible(value) and value.dtype != dtype else value


def _widest(lowered: torch.dtype, arguments: Any) -> torch.dtype:
    widest = lowered
    for leaf in tree_flatten(arguments)[0]:
        if _eligible(leaf):
            widest = torch.promote_types(widest, leaf.dtype)
    return widest


def _target(policy: Policy, lowered: torch.dtype, arguments: Any) -> torch.dtype:
    if policy == Policy.LOWER:
        return lowered
    if policy == Policy.FLOAT32:
        return torch.float32
    return _widest(lowered, arguments)


#: What the ``autocast_dtype`` fault runs an op under instead of its own policy.
_WRONG_POLICY = {Policy.LOWER: Policy.FLOAT32, Policy.FLOAT32: Policy.LOWER,
                 Policy.PROMOTE: Policy.LOWER}


def _kernel(op: Any, policy: Policy) -> Callable[..., Any]:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        lowered = torch.get_autocast_dtype(DEVICE_TYPE)
        tensors = [leaf for leaf in tree_flatten((args, kwargs))[0] if _eligible(leaf)]
        rules = faults.rules_for(op)
        chosen = policy
        if rules and faults.fires(rules, faults.Kind.AUTOCAST_DTYPE,
                                  faults.Call(tensors, {}, str(op))):
            chosen = _WRONG_POLICY[policy]
        target = _target(chosen, lowered, (args, kwargs))
        # Below autocast, like PyTorch's own kernels: the op and its casts are not re-cast.
        with torch._C._ExcludeDispatchKeyGuard(_AUTOCAST):
            cast_args, cast_kwargs = tree_map(functools.partial(_cast, target), (args, kwargs))
            return op(*cast_args, **cast_kwargs)

    return kernel


def _overload(name: str) -> Any:
    packet, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, packet), overload or "default")


def register() -> None:
    """The fallthrough every unnamed op takes, and the kernel of each named op."""
    if _libraries:
        return
    fallthrough = torch.library.Library("_", "IMPL")
    fallthrough.fallback(torch.library.fallthrough_kernel, "AutocastPrivateUse1")
    per_op = torch.library.Library("aten", "IMPL")
    policies = ([(n, Policy.LOWER) for n in LOWER_PRECISION]
                + [(n, Policy.PROMOTE) for n in PROMOTE]
                + [(n, Policy.FLOAT32) for n in float32_ops()])
    for name, policy in policies:
        per_op.impl(name, _kernel(_overload(name), policy), "AutocastPrivateUse1")
    _libraries.extend([fallthrough, per_op])
