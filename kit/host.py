"""The machine a run happened on, as performance figures compare: its CPU, cores and devices.

``cpu_model`` and ``usable_cpus`` describe this machine without torch (the orchestrator records
them in the report's environment, beside ``cpu_count`` and ``device``); ``host_of`` reads the
host back from a report's environment as one ``HostDescription``: what two runs must share for
their figures to compare (``ckit diff``, the portal's trends).
"""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

#: The environment's keys of the host's description that the device section does not hold.
CPU_MODEL_KEY = "cpu_model"
USABLE_CPUS_KEY = "usable_cpus"
#: A note in square brackets ending a device's name: the condition of the run (simnpu says
#: ``[fault injection: 1 rule]`` there), not the device, so it never makes another host.
_RUN_NOTE = re.compile(r"\s*\[[^\[\]]*\]$")


def cpu_model() -> str:
    """The CPU's model name as the OS reports it (Linux's ``/proc/cpuinfo``), else the
    platform's word for it."""
    try:
        lines = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return value.strip()
    return platform.processor() or platform.machine() or "unknown"


def usable_cpus() -> int:
    """The CPUs this process may run on (a container's or ``taskset``'s limit included)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


@dataclass(frozen=True)
class HostDescription:
    """A report's host: figures of two runs compare only where these are all equal."""

    cpu_model: str
    cpu_count: int | None
    usable_cpus: int | None
    device_type: str
    device_count: int
    #: The device the run used, as its backend names it (the CPU's architecture for cpu), less
    #: a note of the run's condition (``device_model``).
    device_name: str

    def words(self) -> str:
        cpus = "?" if self.cpu_count is None else str(self.cpu_count)
        usable = f"{self.usable_cpus} of {cpus}" if self.usable_cpus is not None else cpus
        return (f"{self.cpu_model}, {usable} CPUs, {self.device_count} {self.device_type} "
                f"device(s) ({self.device_name})")

    def differences(self, other: HostDescription) -> tuple[str, ...]:
        """The fields whose values differ from ``other``'s, in declaration order."""
        return tuple(f.name for f in fields(self)
                     if getattr(self, f.name) != getattr(other, f.name))


def host_of(environment: Mapping[str, Any]) -> HostDescription | None:
    """The host a report's (schema-checked) environment describes; None for a report of a kit
    that recorded no CPU model."""
    model, device = environment.get(CPU_MODEL_KEY), environment.get("device")
    if not isinstance(model, str) or not isinstance(device, Mapping):
        return None
    return HostDescription(
        cpu_model=model, cpu_count=_count(environment.get("cpu_count")),
        usable_cpus=_count(environment.get(USABLE_CPUS_KEY)),
        device_type=str(device.get("type", "")), device_count=_count(device.get("count")) or 0,
        device_name=device_model(str(device.get("name", ""))),
    )


def device_model(name: str) -> str:
    """A device's name less a note of the run's condition at its end (``_RUN_NOTE``)."""
    return _RUN_NOTE.sub("", name)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
