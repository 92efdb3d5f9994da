"""The simnpu tensor: a wrapper that lives on device ``simnpu`` and keeps its payload on the host.

A ``SimTensor`` carries the dispatch keys of a PrivateUse1 tensor (device, autograd, autocast) plus
the Python key, so every ATen call on it goes through the real dispatcher (autograd, view and
in-place tracking) before reaching ``__torch_dispatch__``, which hands it to the executor.
The host tensor ``_data`` always has the wrapper's sizes, strides and storage offset, so views
of a SimTensor share host memory exactly like views on a real device share device memory.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import torch

DEVICE_TYPE = "simnpu"


class SimTensor(torch.Tensor):
    _data: torch.Tensor
    #: Set by ``simnpu.executor`` at import; kept here as a hook to avoid an import cycle.
    executor: ClassVar[Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]]

    @staticmethod
    def __new__(cls, data: torch.Tensor) -> SimTensor:
        wrapper = torch.Tensor._make_wrapper_subclass(
            cls,
            data.size(),
            strides=data.stride(),
            storage_offset=data.storage_offset(),
            dtype=data.dtype,
            layout=data.layout,
            device=torch.device(DEVICE_TYPE, 0),
            requires_grad=False,
        )
        wrapper._data = data
        return wrapper

    # Python-level torch functions must not re-wrap their results (``.cpu()`` returns a plain
    # tensor); everything interesting happens below autograd, in ``__torch_dispatch__``.
    __torch_function__ = torch._C._disabled_torch_function_impl  # type: ignore[assignment]

    @classmethod
    def __torch_dispatch__(  # type: ignore[override]
        cls,
        func: Any,
        types: Sequence[type],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        return cls.executor(func, args, kwargs or {})

    @property  # type: ignore[override]
    def data(self) -> torch.Tensor:
        return torch._C.TensorBase.data.__get__(self)  # type: ignore[attr-defined]

    @data.setter
    def data(self, value: torch.Tensor) -> None:
        # ``param.data = other`` swaps the C++ metadata; the host payload must follow it.
        if isinstance(value, SimTensor):
            replace_metadata(self, value)
        else:  # torch refuses the mismatched type with its own error
            torch._C.TensorBase.data.__set__(self, value)  # type: ignore[attr-defined]

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        # torch prints subclasses as ``SimTensor(...)``; a device tensor reads ``tensor(...)``.
        text = torch._tensor_str._str(self, tensor_contents=tensor_contents)
        wide, narrow = f"{type(self).__name__}(", "tensor("
        if not text.startswith(wide):
            return text
        shift = "\n" + " " * (len(wide) - len(narrow))
        return narrow + text[len(wide) :].replace(shift, "\n")

    def tolist(self) -> Any:
        # Like any device tensor: copy to the host first (through the device's own ``_to_copy``).
        return self.cpu().tolist()

    def __format__(self, format_spec: str) -> str:
        # torch formats 0-dim elements via ``.item()`` only for exact ``torch.Tensor``s; without
        # this, printing a SimTensor would recurse through ``repr`` forever.
        if self.dim() == 0:
            return self.detach().item().__format__(format_spec)
        return object.__format__(self, format_spec)

    # ``x += y`` on a SimTensor as the in-place op itself, never ``torch.Tensor``'s C slot:
    # dynamo, tracing a compiled model, takes a Python tensor subclass it cannot trace for a
    # user object, and resolving that slot on it recurses until Python's limit (a ResNet's
    # residual ``hidden_state += residual``). As plain methods, dynamo breaks its graph at
    # the op and runs it eagerly on simnpu, as at any other op on a SimTensor.
    def __iadd__(self, other: Any) -> torch.Tensor:  # type: ignore[misc]
        return self.add_(other)

    def __isub__(self, other: Any) -> torch.Tensor:  # type: ignore[misc]
        return self.sub_(other)

    def __imul__(self, other: Any) -> torch.Tensor:  # type: ignore[misc]
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> torch.Tensor:  # type: ignore[misc]
        return self.div_(other)

    def __deepcopy__(self, memo: dict[int, Any]) -> SimTensor:
        if id(self) in memo:
            return memo[id(self)]
        clone = SimTensor(self._data.clone())
        clone.requires_grad_(self.requires_grad)
        for key, value in self.__dict__.items():
            if key != "_data":
                setattr(clone, key, copy.deepcopy(value, memo))
        memo[id(self)] = clone
        return clone


def host(value: Any) -> Any:
    """The host tensor behind ``value`` (``value`` itself when it is not a SimTensor)."""
    return value._data if isinstance(value, SimTensor) else value


def sync_metadata(tensor: SimTensor) -> None:
    """Make the wrapper's sizes/strides follow its payload after a resizing op (``out=``)."""
    data = tensor._data
    same = (
        tensor.shape == data.shape
        and tensor.stride() == data.stride()
        and tensor.storage_offset() == data.storage_offset()
        and tensor.dtype == data.dtype
    )
    if not same:
        replace_metadata(tensor, SimTensor(data))


_PYTHON_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.Python) | torch._C.DispatchKeySet(
    torch._C.DispatchKey.PythonTLSSnapshot
)


def replace_metadata(tensor: SimTensor, source: SimTensor) -> None:
    """Give ``tensor`` the sizes, strides and payload of ``source`` (``aten::set_data``).

    Inside ``__torch_dispatch__`` autograd is already excluded, so ``set_data`` would come
    straight back here; with the Python key excluded too it reaches its C++ kernel.
    """
    with torch._C._ExcludeDispatchKeyGuard(_PYTHON_KEYS):
        torch._C.TensorBase.data.__set__(tensor, source)  # type: ignore[attr-defined]
    tensor._data = source._data
