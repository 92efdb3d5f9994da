"""Enabling a vendor's device: import its modules, then check the device is visible."""

from __future__ import annotations

import contextlib
import importlib
import os
from dataclasses import dataclass

from kit.errors import DeviceError
from kit.vendors import VendorProfile

#: Set by the kit for a worker given a device (``--devices``) of a vendor without
#: ``device_env``: the index the worker selects with ``torch.<device_type>.set_device``.
DEVICE_INDEX_ENV = "CKIT_DEVICE_INDEX"


@dataclass(frozen=True)
class DeviceInfo:
    type: str
    count: int
    #: The device the process uses (its current one).
    name: str
    #: Every visible device's name, by index.
    names: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"type": self.type, "count": self.count, "name": self.name}
        if self.names:
            data["names"] = list(self.names)
        return data


def import_vendor_modules(vendor: VendorProfile) -> None:
    """Import the vendor's modules, always after torch (a backend extension links against
    torch's libraries and must find them loaded: a profile never lists torch for that)."""
    import torch  # noqa: F401 - loaded first, on purpose

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
        name = platform.processor() or platform.machine()
        return DeviceInfo("cpu", 1, name, (name,))
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
    names = tuple(str(name_fn(i)) if callable(name_fn) else device_type for i in range(count))
    index = _current_index(backend, count)
    return DeviceInfo(device_type, count, names[index] if names else device_type, names)


def _current_index(backend: object, count: int) -> int:
    current = getattr(backend, "current_device", None)
    try:
        index = int(current()) if callable(current) else 0
    except (TypeError, ValueError):  # a backend may name its device instead ("cpu")
        index = 0
    return index if 0 <= index < count else 0


def use_device_index(device_type: str, index: int) -> None:
    """Make device ``index`` the process's current one: tests use ``device_type`` alone."""
    import torch

    count = probe_device(device_type).count
    if not 0 <= index < count:
        raise DeviceError(f"device {device_type}:{index} is not visible "
                          f"({count} device(s): 0..{count - 1})")
    backend = getattr(torch, device_type)
    set_device = getattr(backend, "set_device", None)
    if not callable(set_device):
        raise DeviceError(f"torch.{device_type} has no set_device: give the profile a "
                          "device_env (the variable that limits the visible devices)")
    set_device(index)


def use_ieee_float32() -> None:
    """Float32 math in float32 on every device torch switches: the standards judge a float32
    result with float32's error model, and PyTorch's CUDA convolutions default to TF32 (10
    mantissa bits): on an H200 a ResNet-18's first convolution gradient came out 180 times
    the float32 bound. Matrix products already default to full precision; a vendor's own
    reduced-precision switches (its modules') are the vendor's to document."""
    import torch

    # Each switch only where this torch has it: a vendor recipe that replaced torch must still
    # reach the deploy tier's pinned-torch check, which names what it found.
    set_precision = getattr(torch, "set_float32_matmul_precision", None)
    if callable(set_precision):
        set_precision("highest")
    backends = getattr(torch, "backends", None)
    cudnn = getattr(backends, "cudnn", None)
    if cudnn is None or not hasattr(cudnn, "allow_tf32"):
        return
    # torch's test utilities (imported by the unit tier) freeze the cuDNN flags against bare
    # assignment; this one is meant process-wide. The legacy switch, not the fp32_precision
    # API: mixing the two makes torch refuse every later read of `allow_tf32`.
    unfrozen = getattr(backends, "__allow_nonbracketed_mutation", contextlib.nullcontext)
    with unfrozen():
        cudnn.allow_tf32 = False


def enable_device(vendor: VendorProfile) -> DeviceInfo:
    import_vendor_modules(vendor)
    use_ieee_float32()
    index = os.environ.get(DEVICE_INDEX_ENV)
    if index:
        use_device_index(vendor.device_type, int(index))
    return probe_device(vendor.device_type)
