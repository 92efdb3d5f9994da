"""What really ran on the device: each ATen op of a device call, attributed to where it ran.

A PASS alone cannot tell a device's own kernels from a backend that sends everything to a CPU
fallback (PyTorch's boxed ``cpu_fallback``, or a Python fallback registered for PrivateUse1):
both compute the right values. While the device call runs, a ``TorchDispatchMode`` sees every
op that reaches the backend (after autograd, so CompositeImplicitAutograd ops have already
decomposed into their parts) and asks PyTorch's dispatcher where it went:

- ``native``: the op has a kernel of its own registered for the device's dispatch key
  (PrivateUse1 for an out-of-tree backend; CPU for the kit's own cpu vendor);
- ``decomposed``: it has none, but a composite kernel (CompositeExplicitAutograd, or
  CompositeImplicitAutograd: those of the case's own ops never reach the backend at all, see
  ``decomposed_of``) splits it into other ops, which are what count;
- ``fallback``: device tensors, but no kernel of its own and no composite: the backend's
  boxed fallback ran it;
- ``cpu``: no device tensor in or out.

The mode only looks and passes every call on unchanged, so the results are the same. It runs
in the vendor's process, like the call: attribution is what the dispatcher of that process
says, evidence beside the values rather than a proof.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

_KEY = torch._C.DispatchKey
#: Kernels that split an op into others when the backend has none of its own.
_COMPOSITES = (
    _KEY.CompositeExplicitAutograd,
    _KEY.CompositeExplicitAutogradNonFunctional,
    _KEY.CompositeImplicitAutograd,
)


class Where(enum.StrEnum):
    NATIVE = "native"
    FALLBACK = "fallback"
    DECOMPOSED = "decomposed"
    CPU = "cpu"


@dataclass(frozen=True)
class Dispatch:
    """The ops of one device call by where they ran (qualified overloads, sorted, unique)."""

    native: tuple[str, ...] = ()
    fallback: tuple[str, ...] = ()
    decomposed: tuple[str, ...] = ()
    cpu: tuple[str, ...] = ()

    def ops(self, where: Where) -> tuple[str, ...]:
        ops: tuple[str, ...] = getattr(self, where.value)
        return ops

    def to_json(self) -> dict[str, list[str]]:
        """``details.dispatch``: only the places some op ran (an empty call is ``{}``)."""
        return {where.value: list(self.ops(where)) for where in Where if self.ops(where)}

    @classmethod
    def from_json(cls, data: Any) -> Dispatch | None:
        """A record's ``details.dispatch`` read back; None where it is absent or malformed
        (a report is read, never trusted to be well formed)."""
        if not isinstance(data, Mapping) or not set(data) <= {w.value for w in Where}:
            return None
        places: dict[str, tuple[str, ...]] = {}
        for key, names in data.items():
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                return None
            places[key] = tuple(names)
        return cls(**places)


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
    if has_kernel(name, torch._C._parse_dispatch_key(dispatch_key)):
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
        names = [qualified + ("" if o == "default" else f".{o}") for o in packet.overloads()]
        if any(name in seen for name in names):
            continue
        has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
        if any(has_kernel(name, _KEY.CompositeImplicitAutograd) for name in names):
            decomposed.append(qualified)
    return tuple(sorted(set(decomposed)))
