"""Enabling a vendor's device: import its modules, then check the device is visible."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from kit.errors import DeviceError
from kit.vendors import VendorProfile


@dataclass(frozen=True)
class DeviceInfo:
    type: str
    count: int
    name: str

    def to_json(self) -> dict[str, object]:
        return {"type": self.type, "count": self.count, "name": self.name}


def import_vendor_modules(vendor: VendorProfile) -> None:
    for module in vendor.import_modules:
        try:
            importlib.import_module(module)
        except Exception as exc:  # any import failure is the vendor stack's problem
            raise DeviceError(
                f"vendor {vendor.id}: cannot import {module!r} ({type(exc).__name__}: {exc}); "
                f"install the vendor stack with `ckit vendors install {vendor.id}`"
            ) from None


def probe_device(device_type: str) -> DeviceInfo:
    """Count and name the devices of ``device_type``; raise ``DeviceError`` when none is visible."""
    import platform

    import torch

    if device_type == "cpu":
        return DeviceInfo("cpu", 1, platform.processor() or platform.machine())
    backend = getattr(torch, device_type, None)
    if backend is None or not hasattr(backend, "is_available"):
        raise DeviceError(
            f"device type {device_type!r} is not registered with torch "
            f"(no torch.{device_type} module; did the vendor modules load?)"
        )
    if not backend.is_available():
        raise DeviceError(
            f"device {device_type!r} is not visible: "
            f"torch.{device_type}.is_available() is False"
        )
    count = int(backend.device_count()) if hasattr(backend, "device_count") else 1
    name_fn = getattr(backend, "get_device_name", None)
    name = str(name_fn(0)) if callable(name_fn) else device_type
    return DeviceInfo(device_type, count, name)


def enable_device(vendor: VendorProfile) -> DeviceInfo:
    import_vendor_modules(vendor)
    return probe_device(vendor.device_type)
