"""``torch.simnpu``: the device module PyTorch finds for device type ``simnpu``.

A process computes on one simulated device, index 0. A simulated machine may hold several
boards (``SIMNPU_BOARDS``, default 1) and a process may be limited to some of them
(``SIMNPU_VISIBLE_DEVICES``, like ``CUDA_VISIBLE_DEVICES``): they are counted and named by
board, so the kit's ``--devices`` can give each worker its own. Random ops draw from the host
generator, so ``torch.manual_seed`` seeds simnpu as well; the per-device seeding hooks are no-ops.
"""

from __future__ import annotations

import os

import torch

from simnpu import faults, forks
from simnpu.autocast import SUPPORTED_DTYPES
from simnpu.compile_backend import out_of_dynamos_sight
from simnpu.tensor import DEVICE_TYPE

DEVICE_NAME = "SimNPU-1 (pure Python)"
BOARDS_ENV = "SIMNPU_BOARDS"
VISIBLE_ENV = "SIMNPU_VISIBLE_DEVICES"


def visible_boards() -> list[int]:
    """The boards this process sees, by device index."""
    boards = int(os.environ.get(BOARDS_ENV) or 1)
    visible = os.environ.get(VISIBLE_ENV)
    if visible is None:
        return list(range(boards))
    return [b for b in (int(v) for v in visible.split(",") if v.strip()) if 0 <= b < boards]


def _index(device: int | str | torch.device | None) -> int:
    if device is None:
        return 0
    index = device if isinstance(device, int) else torch.device(device).index
    return 0 if index is None else index


def _check_index(device: int | str | torch.device | None) -> None:
    index = _index(device)
    if not 0 <= index < device_count():
        raise RuntimeError(f"simnpu: invalid device index {index} "
                           f"(device_count() is {device_count()})")


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def _is_in_bad_fork() -> bool:
    """True in a child forked after its parent used simnpu, in fork-unsafe mode only
    (``simnpu.forks``)."""
    return forks.in_bad_fork()


def device_count() -> int:
    return len(visible_boards())


def current_device() -> int:
    return 0


def set_device(device: int | str | torch.device) -> None:
    # Tensors live on index 0: a process uses one board, chosen by SIMNPU_VISIBLE_DEVICES.
    if _index(device) != 0:
        raise RuntimeError("simnpu: a process computes on device 0; limit it to another board "
                           f"with {VISIBLE_ENV}")


def get_device_name(device: int | str | torch.device | None = None) -> str:
    """The device name; says so when fault injection is active, so reports show it."""
    _check_index(device)
    forks.use()  # naming the device initializes a real runtime (CUDA's does)
    name = DEVICE_NAME
    if os.environ.get(BOARDS_ENV) or os.environ.get(VISIBLE_ENV) is not None:
        name = f"{DEVICE_NAME} board {visible_boards()[_index(device)]}"
    rules = len(faults.active_rules())
    if rules:
        return f"{name} [fault injection: {rules} rule{'s' if rules != 1 else ''}]"
    return name


def synchronize(device: int | str | torch.device | None = None) -> None:
    _check_index(device)  # every op completes before it returns


def manual_seed(seed: int) -> None:
    """No-op: simnpu shares the host generator that ``torch.manual_seed`` seeds."""


def manual_seed_all(seed: int) -> None:
    """No-op: simnpu shares the host generator that ``torch.manual_seed`` seeds."""


# PyTorch saves and restores each device's generator around a compiled call's tracing.
@out_of_dynamos_sight
def get_rng_state(device: int | str | torch.device = DEVICE_TYPE) -> torch.Tensor:
    """The shared host generator's state (``torch.random.fork_rng`` saves it per device)."""
    _check_index(device)
    return torch.get_rng_state()


@out_of_dynamos_sight
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
    """The dtypes ``torch.autocast("simnpu")`` runs in (``simnpu.autocast``'s policy); for any
    other it warns and stays off."""
    return list(SUPPORTED_DTYPES)


def is_bf16_supported() -> bool:
    return True
