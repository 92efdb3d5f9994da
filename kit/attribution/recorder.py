"""Recording where a device call's ops ran: a ``TorchDispatchMode`` asking the dispatcher
(``kit.attribution`` says what each place means), and watching a C++ backend's own kernel the
first time each op reaches it, so that a kernel which is the fallback under another name (the
boxed fallback function registered per op, or one that copies its arguments to the host and
calls the CPU op) is recorded ``fallback`` (``watched_call``)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._pytree import tree_leaves

from kit.attribution.dispatch import Dispatch, Where
from kit.dispatch_mode import EagerDispatchMode
from kit.zero_tensors import materialized

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


#: Ops whose work is moving data between devices (or reading a value to the host): their
#: kernels copy to the host by definition, so a copy inside them says nothing.
_TRANSFERS = frozenset({
    "aten::_to_copy", "aten::_to_cpu", "aten::to.device", "aten::to.dtype_layout",
    "aten::to.dtype", "aten::to.other", "aten::copy_", "aten::_copy_from",
    "aten::_copy_from_and_resize", "aten::_local_scalar_dense", "aten::item",
})


class _KernelWatch(EagerDispatchMode):
    """Sees the ops a backend kernel itself calls through the dispatcher, and notes whether it
    took its work to the host: what a CPU fallback does whatever name it is registered under
    (``at::native::cpu_fallback`` copies its device arguments with ``_to_cpu``, then
    redispatches to the CPU kernel unseen; a kernel of ``x.cpu()``, the CPU op, ``.to(device)``
    copies with ``to`` and calls its own op on host tensors)."""

    def __init__(self, device_type: str, op: str) -> None:
        super().__init__()
        self.device_type = device_type
        self.op = op
        self.moved_to_host = False

    def __torch_dispatch__(  # type: ignore[override]
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        args, kwargs = materialized(args, kwargs or {})
        result = func(*args, **kwargs)
        if not isinstance(func, torch._ops.OpOverload):
            return result
        name = qualified_name(func)
        on_device = _on_device((args, kwargs), self.device_type)
        # Device data in, host tensors out: the kernel took its work to the CPU; or the
        # kernel called its own op on host tensors only: the CPU kernel did the work.
        if (name in _HOST_COPIES and on_device and _on_host(result)) or (
                name == self.op and not on_device and _on_host((args, kwargs))):
            self.moved_to_host = True
        return result


#: The copies by which a kernel moves device tensors to the host (``x.cpu()`` is seen as
#: ``to``, a composite the watch sees before it splits; ``cpu_fallback``'s as ``_to_cpu``).
_HOST_COPIES = _TRANSFERS - {"aten::_local_scalar_dense", "aten::item",
                             "aten::_copy_from_and_resize"}


def _on_host(values: Any) -> bool:
    return any(isinstance(leaf, torch.Tensor) and leaf.device.type == "cpu"
               for leaf in tree_leaves(values))


def _scalar_for_tensor(func: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> bool:
    """Whether a Python number stands for a Tensor argument (a dispatch mode sees
    ``add(t, 2.5)``'s wrapped number as 2.5): a redispatch, which takes the schema's types
    literally, would refuse the call, so such a call is placed without watching its kernel."""
    for position, argument in enumerate(func._schema.arguments):
        if not isinstance(argument.type, torch.TensorType):
            continue
        value = args[position] if position < len(args) else kwargs.get(argument.name)
        if isinstance(value, (bool, int, float, complex)):
            return True
    return False


def _plain_device_call(args: Any, device_type: str) -> bool:
    """Whether the call's device tensors are plain tensors of a C++ backend: a tensor subclass
    (a Python device such as simnpu) is served by its own ``__torch_dispatch__``, which a
    redispatch to the backend key would skip."""
    tensors = [leaf for leaf in tree_leaves(args) if isinstance(leaf, torch.Tensor)]
    return any(t.device.type == device_type for t in tensors) and all(
        type(t) is torch.Tensor for t in tensors)


def watched_call(func: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any],
                 dispatch_key: str, device_type: str) -> tuple[Any, bool]:
    """``func``'s result from the backend's own kernel, and whether that kernel moved device
    data to the host. The call goes straight to the kernel (``redispatch`` to the backend key:
    a dispatch mode sees the op after autograd, where only the backend is left), with a
    ``_KernelWatch`` active so that the kernel's own dispatcher calls are seen."""
    keyset = torch._C.DispatchKeySet(getattr(_KEY, dispatch_key))
    with _KernelWatch(device_type, qualified_name(func)) as watch:
        result = func.redispatch(keyset, *args, **kwargs)
    return result, watch.moved_to_host


class _Recorder(EagerDispatchMode):
    def __init__(self, log: DispatchLog) -> None:
        super().__init__()
        self.log = log
        self.dispatch_key = dispatch_key_of(log.device_type)

    def __torch_dispatch__(  # type: ignore[override]
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        args, kwargs = materialized(args, kwargs or {})
        if not isinstance(func, torch._ops.OpOverload):  # a higher-order op: its parts dispatch
            return func(*args, **kwargs)
        name = qualified_name(func)
        if self._watches(name, args, kwargs) and not _scalar_for_tensor(func, args, kwargs):
            result, moved = watched_call(func, args, kwargs, self.dispatch_key,
                                         self.log.device_type)
            # Recorded once the op ran: a call the backend refused ran nowhere.
            self.log.seen[name] = Where.FALLBACK if moved else Where.NATIVE
            return result
        result = func(*args, **kwargs)
        if name not in self.log.seen or self.log.seen[name] is Where.CPU:
            on_device = _on_device((args, kwargs, result), self.log.device_type)
            self.log.seen[name] = (
                device_kernel_place(name, self.dispatch_key) if on_device else Where.CPU
            )
        return result

    def _watches(self, name: str, args: tuple[Any, ...], kwargs: Any) -> bool:
        """Whether to watch this call's kernel: the first call of an op not yet placed that
        the dispatcher sends to a kernel registered for a C++ backend's own key (the CPU
        vendor's kernels are CPU's by definition), unless the op's work is a transfer."""
        if self.dispatch_key == "CPU" or name in _TRANSFERS:
            return False
        if name in self.log.seen and self.log.seen[name] is not Where.CPU:
            return False
        return (device_kernel_place(name, self.dispatch_key) is Where.NATIVE
                and _plain_device_call((args, kwargs), self.log.device_type))


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
