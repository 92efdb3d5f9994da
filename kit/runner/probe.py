"""A device health probe run in the worker after a test fails.

Some device failures poison the process (later results are garbage). Probing with a small,
exactly representable computation after every failure stops the damage spreading: an unhealthy
worker is replaced before it runs another test.
"""

from __future__ import annotations


def probe_device_health(device: str) -> tuple[bool, str]:
    import torch

    try:
        a = torch.arange(1.0, 17.0).reshape(4, 4)
        expected = a @ a.t() + a.sum()
        on_device = a.to(device)
        actual = (on_device @ on_device.t() + on_device.sum()).cpu()
    except Exception as exc:  # any failure of the probe itself means "unhealthy"
        return False, f"probe raised {type(exc).__name__}: {exc}"
    # Small integers in float32: every correct device computes these exactly.
    if actual.dtype != expected.dtype or not bool((actual == expected).all()):
        return False, "probe result differs from CPU (device state corrupted)"
    return True, "healthy"
