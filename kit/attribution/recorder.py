"""Recording where a device call's ops ran: a ``TorchDispatchMode`` asking the dispatcher
(``kit.attribution`` says what each place means)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from kit.attribution.dispatch import Dispatch, Where

_KEY = torch._C.DispatchKey
#: Kernels that split an op into others when the backend has none of its own.
_COMPOSITES = (
    _KEY.CompositeExplicitAutograd,
    _KEY.CompositeExplicitAutogradNonFunctional,
    _KEY.CompositeImplicitAutograd,
)


@dataclass(frozen=True)
class DispatchLog:
    """Where each op seen so far ran; filled by ``recording``, read by ``dispatch``."""

    device_type: str
    seen: dict[str, Where] = field(default_factory=dict)

    def dispatch(self, decomposed: Iterable[str] = ()) -> Dispatch:
        """The call's ``Dispatch``, with ``decomposed``: composite ops of the case that never
        reached the backend (``decomposed_of``)."""
        by_place: dict[Where, set[str]] = {where: set() for where in Where}
        for name, where in self.seen.items():
            by_place[where].add(name)
        by_place[Where.DECOMPOSED].update(decomposed)
        return Dispatch(**{w.value: tuple(sorted(names)) for w, names in by_place.items()})


def qualified_name(func: Any) -> str:
    """``aten::add.Tensor``; ``aten::mm`` for a default overload."""
    overload = func._overloadname
    name: str = func._schema.name
    return name if overload == "default" else f"{name}.{overload}"


def dispatch_key_of(device_type: str) -> str:
    """The dispatch key of a device type's dense tensors: ``PrivateUse1`` for ``simnpu``."""
    key: str = torch._C._dispatch_key_for_device(device_type)
    return key


@functools.cache
def device_kernel_place(name: str, dispatch_key: str) -> Where:
    """Where the dispatcher sends op ``name`` on a tensor of ``dispatch_key`` (cached: a
    backend registers its kernels when it is imported, before any test runs)."""
    has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
    if has_kernel(name, dispatch_key):
        return Where.NATIVE
    if any(has_kernel(name, key) for key in _COMPOSITES):
        return Where.DECOMPOSED
    return Where.FALLBACK


def _on_device(values: Any, device_type: str) -> bool:
    return any(
        isinstance(leaf, torch.Tensor) and leaf.device.type == device_type
        for leaf in tree_leaves(values)
    )


class _Recorder(TorchDispatchMode):
    def __init__(self, log: DispatchLog) -> None:
        super().__init__()
        self.log = log
        self.dispatch_key = dispatch_key_of(log.device_type)

    def __torch_dispatch__(  # type: ignore[override]
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        if not isinstance(func, torch._ops.OpOverload):  # a higher-order op: its parts dispatch
            return result
        # Recorded once the op ran: a call the backend refused ran nowhere.
        name = qualified_name(func)
        if name not in self.log.seen or self.log.seen[name] is Where.CPU:
            on_device = _on_device((args, kwargs, result), self.log.device_type)
            self.log.seen[name] = (
                device_kernel_place(name, self.dispatch_key) if on_device else Where.CPU
            )
        return result


@contextmanager
def recording(log: DispatchLog) -> Iterator[DispatchLog]:
    """Record into ``log`` the ops that reach the backend inside the block."""
    with _Recorder(log):
        yield log


@functools.cache
def _dispatcher_ops() -> frozenset[str]:
    return frozenset(torch._C._dispatch_get_all_op_names())


def decomposed_of(aten_names: Iterable[str], seen: Mapping[str, Where]) -> tuple[str, ...]:
    """Those of ``aten_names`` (ATen packets such as ``matmul``) with a CompositeImplicitAutograd
    overload, where no overload reached the backend: they split into other ops before any
    dispatch mode sees them. Named by packet (``aten::matmul``)."""
    decomposed: list[str] = []
    for packet_name in aten_names:
        packet = getattr(torch.ops.aten, packet_name, None)
        if packet is None:
            continue
        qualified = f"aten::{packet_name}"
        # A packet also lists TorchScript-only overloads (``sub.int``) the dispatcher lacks.
        names = [name for o in packet.overloads()
                 if (name := qualified + ("" if o == "default" else f".{o}")) in _dispatcher_ops()]
        if any(name in seen for name in names):
            continue
        has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
        if any(has_kernel(name, _KEY.CompositeImplicitAutograd) for name in names):
            decomposed.append(qualified)
    return tuple(sorted(set(decomposed)))
