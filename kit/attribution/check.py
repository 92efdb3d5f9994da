"""The kit's own check of a device's attribution (``details.dispatch_check``), made in the judge.

``details.dispatch`` is written in the vendor's process, where a vendor module can patch the
recorder. The judge never imports vendor code, so it cannot see where the device's ops ran; it
can see which ops the same call reaches on CPU (a dispatch mode sees an op where a backend's
kernel would be chosen, before any composite of the backend splits it, so both lists name ops
at the same level) and compare the two lists by op packet (``aten::add`` of ``add.Tensor``;
another overload of an op reached is the same op):

- ``unreached``: ops the device claims ran ``native`` that the CPU call never reaches and that
  are none of the case's own ops (a CompositeImplicitAutograd op a backend overrides whole);
- ``unlisted``: ops the CPU call reaches that the device's list names nowhere (an op dropped
  from the list, the way to hide a fallback from ``native_required``).

Advisory, a finding beside the verdict: a backend may legitimately take another path (a kernel
CPU picks for CPU alone, a fused kernel), so nothing here fails a test. Absent where the lists
agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: ``details`` key of the judge's comparison (``kit.results.DISPATCH_KEY`` is the device's list).
DISPATCH_CHECK_KEY = "dispatch_check"
#: Packets whose work is moving, allocating or viewing memory: a backend calls them as its
#: storage needs, not as the call's computation, so neither list has to name them.
_PLUMBING = frozenset({
    "aten::_to_copy", "aten::_to_cpu", "aten::to", "aten::copy_", "aten::_copy_from",
    "aten::_copy_from_and_resize", "aten::_local_scalar_dense", "aten::item", "aten::empty",
    "aten::empty_strided", "aten::empty_like", "aten::resize_", "aten::as_strided",
    "aten::set_", "aten::view", "aten::_unsafe_view", "aten::_reshape_alias", "aten::alias",
    "aten::detach", "aten::lift_fresh", "aten::clone", "aten::contiguous",
})


def packet(name: str) -> str:
    """``aten::add`` of ``aten::add.Tensor`` (a packet name is its own packet)."""
    return name.split(".", 1)[0]


@dataclass(frozen=True)
class DispatchCheck:
    """Where the device's list and the CPU call's ops disagree (sorted op names)."""

    unreached: tuple[str, ...] = ()
    unlisted: tuple[str, ...] = ()

    def to_json(self) -> dict[str, list[str]]:
        """``details.dispatch_check``: only the kinds found (``{}`` where the lists agree)."""
        found = {"unreached": self.unreached, "unlisted": self.unlisted}
        return {kind: list(names) for kind, names in found.items() if names}


def compare(claimed: Mapping[str, Any], cpu_ops: Iterable[str],
            case_ops: Iterable[str]) -> DispatchCheck:
    """The device's ``details.dispatch`` (``claimed``) against the ops the CPU call reached
    (``cpu_ops``, qualified); ``case_ops``: the case's own ops, by OpInfo's ATen name."""
    reached = {packet(name) for name in cpu_ops}
    own = {f"aten::{name}" for name in case_ops}
    listed = {packet(name) for names in claimed.values() for name in names}
    unreached = {name for name in claimed.get("native", ())
                 if packet(name) not in reached | own | _PLUMBING}
    unlisted = {name for name in cpu_ops if packet(name) not in listed | _PLUMBING}
    return DispatchCheck(tuple(sorted(unreached)), tuple(sorted(unlisted)))


def cpu_dispatched(call: Callable[[], object]) -> frozenset[str]:
    """The ATen ops (qualified overloads) ``call`` reaches on CPU, as the device's recorder
    names them; what it reached before raising if it raises (the judge says why elsewhere)."""
    import torch

    from kit.attribution.recorder import qualified_name
    from kit.dispatch_mode import EagerDispatchMode
    from kit.zero_tensors import materialized

    seen: set[str] = set()

    class Tracing(EagerDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            if isinstance(func, torch._ops.OpOverload):
                seen.add(qualified_name(func))
            args, kwargs = materialized(args, kwargs or {})
            return func(*args, **kwargs)

    with torch.no_grad(), Tracing():
        try:
            call()
        except Exception:  # noqa: BLE001 - see the docstring
            pass
    return frozenset(seen)
