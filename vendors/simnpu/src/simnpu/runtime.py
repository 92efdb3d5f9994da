"""``torch.simnpu``: the device module PyTorch finds for device type ``simnpu``.

There is one simulated device, index 0. Random ops draw from the host generator, so
``torch.manual_seed`` seeds simnpu as well; the per-device seeding hooks are no-ops.
"""

from __future__ import annotations

import torch

from simnpu import faults
from simnpu.tensor import DEVICE_TYPE

DEVICE_NAME = "SimNPU-1 (pure Python)"


def _check_index(device: int | str | torch.device | None) -> None:
    if device is None:
        return
    index = device if isinstance(device, int) else torch.device(device).index
    if index not in (None, 0):
        raise RuntimeError(f"simnpu: invalid device index {index} (device_count() is 1)")


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
    """The device name; says so when fault injection is active, so reports show it."""
    _check_index(device)
    rules = len(faults.active_rules())
    if rules:
        return f"{DEVICE_NAME} [fault injection: {rules} rule{'s' if rules != 1 else ''}]"
    return DEVICE_NAME


def synchronize(device: int | str | torch.device | None = None) -> None:
    _check_index(device)  # every op completes before it returns


def manual_seed(seed: int) -> None:
    """No-op: simnpu shares the host generator that ``torch.manual_seed`` seeds."""


def manual_seed_all(seed: int) -> None:
    """No-op: simnpu shares the host generator that ``torch.manual_seed`` seeds."""


def get_rng_state(device: int | str | torch.device = DEVICE_TYPE) -> torch.Tensor:
    """The shared host generator's state (``torch.random.fork_rng`` saves it per device)."""
    _check_index(device)
    return torch.get_rng_state()


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
    """None: simnpu registers no autocast kernels, so ``torch.autocast("simnpu")`` warns and
    stays off rather than failing inside the first op."""
    return []


def is_bf16_supported() -> bool:
    return True
