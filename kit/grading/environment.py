"""What the report records about the machine and software the run happened on."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import sys
from pathlib import Path
from typing import Any

from kit.device import DeviceInfo
from kit.errors import InputError
from kit.hashing import kept_while_unchanged, sha256_bytes
from kit.host import CPU_MODEL_KEY, USABLE_CPUS_KEY, cpu_model, usable_cpus

#: Set by the kit when a run happens inside a reference container (a JSON object).
CONTAINER_ENV = "CKIT_CONTAINER"
CONTAINER_FIELDS = ("image", "image_id", "base", "os")


def collect_environment(device_info: DeviceInfo) -> dict[str, Any]:
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
        # With cpu_count and device: the host performance figures compare within (kit.host).
        CPU_MODEL_KEY: cpu_model(),
        USABLE_CPUS_KEY: usable_cpus(),
        "torch": torch_build(),
        "device": dict(device_info.to_json()),
        "packages": package_fingerprint(),
        "container": container_info(),
    }


def torch_build() -> dict[str, Any]:
    """torch's version and commit, read from its ``version.py`` without importing torch: the
    orchestrator never runs an op, and importing torch would cost every run seconds of CPU
    while its worker and judge start. A process that has torch loaded reads the loaded one."""
    loaded = sys.modules.get("torch")
    module: Any = loaded.version if loaded is not None else _torch_version_module()
    return {"version": str(module.__version__), "git_version": getattr(module, "git_version", None)}


def _torch_version_module() -> Any:
    spec = importlib.util.find_spec("torch")  # a top-level name: finding it runs none of torch
    if spec is None or not spec.submodule_search_locations:
        raise InputError("torch is not installed in the kit's environment")
    path = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    version_spec = importlib.util.spec_from_file_location("_ckit_torch_version", path)
    if version_spec is None or version_spec.loader is None:
        raise InputError(f"torch's version file {path} cannot be read")
    module = importlib.util.module_from_spec(version_spec)
    version_spec.loader.exec_module(module)
    return module


def installed_packages() -> list[str]:
    """``name==version`` of every installed distribution, like ``pip freeze``, sorted, unique.

    Reading every distribution's metadata takes a tenth of a second or more; a process that
    builds many reports reads it again only when ``sys.path`` or one of its directories has
    changed since (installing or removing a distribution changes its directory)."""
    signature = _path_signature()
    mtimes = (mtime for _, mtime, _ in signature)
    packages: list[str] = kept_while_unchanged(_installed, signature, mtimes, _read_installed)
    return list(packages)  # a copy: the kept list stays as read


def _read_installed() -> list[str]:
    lines = set()
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name:  # a broken install can leave a distribution without metadata
            lines.add(f"{_normalize(name)}=={dist.version}")
    return sorted(lines)


#: ``sys.path``'s directories as they stood (path, modification time, inode) -> what they held.
_installed: dict[tuple[tuple[str, int, int], ...], list[str]] = {}


def _path_signature() -> tuple[tuple[str, int, int], ...]:
    entries = []
    for entry in sys.path:
        try:
            status = os.stat(entry or ".")
        except OSError:
            status = None
        entries.append((entry, status.st_mtime_ns, status.st_ino) if status else (entry, -1, -1))
    return tuple(entries)


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
