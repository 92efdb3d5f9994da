"""What the report records about the machine and software the run happened on."""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import re
from typing import Any

from kit.device import DeviceInfo
from kit.errors import InputError
from kit.hashing import sha256_bytes

#: Set by the kit when a run happens inside a reference container (a JSON object).
CONTAINER_ENV = "CKIT_CONTAINER"
CONTAINER_FIELDS = ("image", "image_id", "base", "os")


def collect_environment(device_info: DeviceInfo) -> dict[str, Any]:
    import torch

    return {
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
        },
        "os": {
            "system": platform.system(),
            "release": platform.release(),
            "platform": platform.platform(),
        },
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch": {
            "version": str(torch.__version__),
            "git_version": getattr(torch.version, "git_version", None),
        },
        "device": dict(device_info.to_json()),
        "packages": package_fingerprint(),
        "container": container_info(),
    }


def installed_packages() -> list[str]:
    """``name==version`` of every installed distribution, like ``pip freeze``, sorted, unique."""
    lines = set()
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name:  # a broken install can leave a distribution without metadata
            lines.add(f"{_normalize(name)}=={dist.version}")
    return sorted(lines)


def _normalize(name: str) -> str:
    # PEP 503: one spelling per project, so the same environment always hashes the same.
    return re.sub(r"[-_.]+", "-", name).lower()


def package_fingerprint() -> dict[str, Any]:
    lines = installed_packages()
    text = "".join(f"{line}\n" for line in lines)
    return {"count": len(lines), "sha256": sha256_bytes(text.encode("utf-8"))}


def container_info() -> dict[str, str] | None:
    raw = os.environ.get(CONTAINER_ENV)
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        raise InputError(f"environment variable {CONTAINER_ENV}: not valid JSON") from None
    if not isinstance(data, dict):
        raise InputError(f"environment variable {CONTAINER_ENV}: expected a JSON object")
    unknown = sorted(set(data) - set(CONTAINER_FIELDS))
    if unknown:
        raise InputError(f"environment variable {CONTAINER_ENV}: unknown field {unknown[0]!r}")
    for key in CONTAINER_FIELDS:
        if not isinstance(data.get(key), str):
            raise InputError(
                f"environment variable {CONTAINER_ENV}: field {key}: expected a string"
            )
    return {key: data[key] for key in CONTAINER_FIELDS}
