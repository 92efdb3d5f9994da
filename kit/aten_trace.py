"""Which ATen ops a call runs, recorded once on CPU by a dispatch mode.

Blame (``kit.grading.blame``) asks a tier which primitives a composite test calls; the answer
is the same for every vendor, so it is traced in the kit's own process, never on a device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: ATen kernels named apart from the op users call, by the prefix that names them.
_KERNEL_FAMILIES = {"scaled_dot_product_": "scaled_dot_product_attention"}


def aten_name(packet: str) -> str:
    """The op a kernel implements, as OpInfo names it: ``aten::_softmax`` -> ``softmax``,
    ``aten::add_`` -> ``add``, ``aten::native_layer_norm`` -> ``layer_norm``,
    ``aten::_scaled_dot_product_flash_attention_for_cpu`` -> ``scaled_dot_product_attention``."""
    name = packet.split("::")[-1].strip("_").removeprefix("native_")
    for prefix, family in _KERNEL_FAMILIES.items():
        if name.startswith(prefix):
            return family
    return name


def ops_called(call: Callable[[], object]) -> tuple[str, ...]:
    """The ATen ops ``call`` runs, in first-call order; () when the call raises (no trace,
    nothing to blame: blame is advisory)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: list[str] = []

    class Recording(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            name = aten_name(func._schema.name)
            if name not in seen:
                seen.append(name)
            return func(*args, **(kwargs or {}))

    with torch.no_grad():
        try:
            with Recording():
                call()
        except Exception:  # noqa: BLE001 - see the docstring
            return ()
    return tuple(seen)
