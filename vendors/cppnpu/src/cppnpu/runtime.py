"""``torch.cppnpu``: the device module PyTorch finds for device type ``cppnpu``.

One device, index 0 (as the C++ device guard says). Ops without a native kernel run on the host
through the CPU fallback, random ones included, so cppnpu draws random numbers from the host
generator: ``torch.manual_seed`` seeds it and the per-device seeding hooks are no-ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import torch

from cppnpu import faults

_F = TypeVar("_F", bound=Callable[..., Any])

DEVICE_TYPE = "cppnpu"
DEVICE_NAME = "CppNPU-1 (C++ reference backend)"


def _index(device: int | str | torch.device | None) -> int:
    if device is None:
        return 0
    index = device if isinstance(device, int) else torch.device(device).index
    return 0 if index is None else index


def _check_index(device: int | str | torch.device | None) -> None:
    if _index(device) != 0:
        raise RuntimeError(f"cppnpu: invalid device index {_index(device)} (one device: 0)")


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def _is_in_bad_fork() -> bool:
    return False


def device_count() -> int:
    return 1


def current_device() -> int:
    return 0


def set_device(device: int | str | torch.device) -> None:
    _check_index(device)


def get_device_name(device: int | str | torch.device | None = None) -> str:
    """The device name; says which kernels are broken on purpose, so reports show it."""
    _check_index(device)
    broken = faults.active()
    return f"{DEVICE_NAME} [faults: {','.join(broken)}]" if broken else DEVICE_NAME


def synchronize(device: int | str | torch.device | None = None) -> None:
    _check_index(device)  # every kernel completes before it returns


def memory_allocated(device: int | str | torch.device | None = None) -> int:
    """Bytes of device memory in use (the C++ arena's count)."""
    _check_index(device)
    return int(torch.ops.cppnpu.memory_allocated())


def manual_seed(seed: int) -> None:
    """No-op: cppnpu shares the host generator that ``torch.manual_seed`` seeds."""


def manual_seed_all(seed: int) -> None:
    """No-op: cppnpu shares the host generator that ``torch.manual_seed`` seeds."""


def _untraced(fn: _F) -> _F:
    """``fn``, which dynamo never traces, nor what it calls. PyTorch saves and restores each
    device's generator while dynamo traces some calls (attention), with dispatch excluded: dynamo
    would take this module's Python for user code there and fail to fake the state. What
    ``torch._dynamo.disable`` does, told to the frame evaluator in torch's C extension, so that
    importing cppnpu does not import dynamo."""
    from torch._C._dynamo.eval_frame import (
        _FrameAction,
        _FrameExecStrategy,
        set_code_exec_strategy,
    )

    set_code_exec_strategy(fn.__code__, _FrameExecStrategy(_FrameAction.SKIP, _FrameAction.SKIP))
    return fn


@_untraced
def get_rng_state(device: int | str | torch.device = DEVICE_TYPE) -> torch.Tensor:
    """The shared host generator's state (``torch.random.fork_rng`` saves it per device)."""
    _check_index(device)
    return torch.get_rng_state()


@_untraced
def set_rng_state(new_state: torch.Tensor, device: int | str | torch.device = DEVICE_TYPE) -> None:
    _check_index(device)
    torch.set_rng_state(new_state)


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state(0)]


def set_rng_state_all(new_states: list[torch.Tensor]) -> None:
    (state,) = new_states
    set_rng_state(state, 0)


def initial_seed() -> int:
    return torch.initial_seed()


def get_amp_supported_dtype() -> list[torch.dtype]:
    """None: cppnpu registers no autocast kernels, so ``torch.autocast("cppnpu")`` warns and
    stays off."""
    return []


def is_bf16_supported() -> bool:
    return True
