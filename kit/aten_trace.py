"""Which ATen ops a call runs, recorded once on CPU by a dispatch mode.

Blame (``kit.grading.blame``) asks a tier which primitives a composite test calls; the answer
is the same for every vendor, so it is traced in the kit's own process, never on a device. Each
op comes with how the call used it (``Primitive.uses``: strided, ``out=``, in place, empty), so
that blame names only the failures of an op that the call's own inputs could meet. An op a
device may run as one fused kernel (attention) is recorded as the call names it too, since CPU
may split it into other ops for the very inputs a device's fused kernel takes whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: ATen kernels named apart from the op users call, by the prefix that names them.
_KERNEL_FAMILIES = {"scaled_dot_product_": "scaled_dot_product_attention"}
#: The ops those kernels implement, as Python calls them.
_FUSED_OPS = frozenset(_KERNEL_FAMILIES.values())


def aten_name(packet: str) -> str:
    """The op a kernel implements, as OpInfo names it: ``aten::_softmax`` -> ``softmax``,
    ``aten::add_`` -> ``add``, ``aten::native_layer_norm`` -> ``layer_norm``,
    ``aten::_scaled_dot_product_flash_attention_for_cpu`` -> ``scaled_dot_product_attention``."""
    name = packet.split("::")[-1].strip("_").removeprefix("native_")
    for prefix, family in _KERNEL_FAMILIES.items():
        if name.startswith(prefix):
            return family
    return name


class Primitive(str):
    """An op a call runs (its OpInfo name), with how the call used it: ``uses`` holds
    ``PLAIN`` and, where some call of it did so, ``STRIDED`` (a tensor argument not contiguous),
    ``OUT`` (an ``out=`` overload), ``INPLACE`` (an in-place overload), ``EMPTY`` (a
    zero-element tensor argument) and ``FUSED`` (a fused kernel named apart from its op, such
    as attention's). A ``str``, so that it reads as the op's name wherever only that counts."""

    uses: frozenset[str]

    def __new__(cls, name: str, uses: frozenset[str] = frozenset()) -> Primitive:
        made = super().__new__(cls, name)
        made.uses = uses
        return made


PLAIN, STRIDED, OUT, INPLACE, EMPTY, FUSED = (
    "plain", "strided", "out", "inplace", "empty", "fused")


def _tensor_uses(args: Any, kwargs: Any) -> set[str]:
    import torch
    from torch.utils._pytree import tree_leaves

    uses = {PLAIN}
    tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
    if any(not t.is_contiguous() for t in tensors):
        uses.add(STRIDED)
    if any(t.numel() == 0 for t in tensors):
        uses.add(EMPTY)
    return uses


def _uses_of(func: Any, args: Any, kwargs: Any) -> set[str]:
    """How this one call uses its op (``Primitive.uses``)."""
    schema_name: str = func._schema.name
    uses = _tensor_uses(args, kwargs)
    if func._overloadname.startswith("out"):
        uses.add(OUT)
    if schema_name.endswith("_") and not schema_name.split("::")[-1].startswith("_"):
        uses.add(INPLACE)
    if schema_name.split("::")[-1].strip("_").removeprefix("native_").startswith(
            tuple(_KERNEL_FAMILIES)):
        uses.add(FUSED)
    return uses


def ops_called(call: Callable[[], object]) -> tuple[Primitive, ...]:
    """The ATen ops ``call`` runs, in first-call order, each with how it was used; () when the
    call raises (no trace, nothing to blame: blame is advisory)."""
    import torch
    from torch.overrides import TorchFunctionMode

    from kit.dispatch_mode import EagerDispatchMode
    from kit.zero_tensors import materialized

    seen: dict[str, set[str]] = {}

    class Fused(TorchFunctionMode):
        """An op that a device may run as one fused kernel (attention) although CPU splits it
        into others for these inputs: seen before it splits, as the call names it."""

        def __torch_function__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            if name in _FUSED_OPS:
                seen.setdefault(name, set()).update(_tensor_uses(args, kwargs) | {FUSED})
            return func(*args, **kwargs)

    class Recording(EagerDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            args, kwargs = materialized(args, kwargs or {})
            seen.setdefault(aten_name(func._schema.name), set()).update(
                _uses_of(func, args, kwargs))
            return func(*args, **kwargs)

    with torch.no_grad():
        try:
            with Fused(), Recording():
                call()
        except Exception:  # noqa: BLE001 - see the docstring
            return ()
    return tuple(Primitive(name, frozenset(uses)) for name, uses in seen.items())
