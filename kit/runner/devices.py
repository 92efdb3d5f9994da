"""``--devices``: one device per worker slot on a machine with several.

A slot's worker (and every replacement of it) sees its own device: through the profile's
``device_env`` (``CUDA_VISIBLE_DEVICES=2``: the process sees one device) or, without one,
through ``torch.<device_type>.set_device`` in the worker (``kit.device.DEVICE_INDEX_ENV``).
The tests themselves are unchanged: they use the current device, whichever it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kit.device import DEVICE_INDEX_ENV
from kit.errors import DeviceError, InputError

ALL = "all"
_INDEX = re.compile(r"0|[1-9][0-9]{0,3}")


def parse_devices(text: str) -> tuple[str, ...]:
    """``all``, or distinct indices ``0,1,2``."""
    if text.strip() == ALL:
        return (ALL,)
    indices = tuple(part.strip() for part in text.split(","))
    bad = next((i for i in indices if not _INDEX.fullmatch(i)), None)
    if bad is not None:
        raise InputError(f"--devices: expected `all` or device indices like 0,1,2; got {bad!r}")
    if len(set(indices)) != len(indices):
        raise InputError(f"--devices {text}: an index is given twice")
    return indices


@dataclass(frozen=True)
class DeviceSlots:
    """The device index of each worker slot, and how a worker is given it."""

    indices: tuple[str, ...]
    device_env: str | None

    def env_for(self, slot: int) -> dict[str, str]:
        index = self.indices[slot]
        return {self.device_env: index} if self.device_env else {DEVICE_INDEX_ENV: index}

    def to_json(self, names: dict[int, str]) -> list[dict[str, Any]]:
        """The report's ``run.devices``: per slot, its index and the name its worker saw."""
        return [{"slot": slot, "index": index, "name": names.get(slot, "")}
                for slot, index in enumerate(self.indices)]


def assign_slots(
    requested: tuple[str, ...],
    visible: int,
    workers: int,
    device_env: str | None,
    device_type: str,
) -> DeviceSlots:
    """Slots for ``workers`` workers (0: one per device), devices shared round-robin."""
    indices = tuple(str(i) for i in range(visible)) if requested == (ALL,) else requested
    beyond = [i for i in indices if int(i) >= visible]
    if beyond or not indices:
        raise DeviceError(f"--devices: {device_type} device(s) {', '.join(beyond) or 'none'} "
                          f"not visible; the worker sees {visible} (0..{visible - 1})")
    count = workers or len(indices)
    return DeviceSlots(tuple(indices[slot % len(indices)] for slot in range(count)), device_env)
