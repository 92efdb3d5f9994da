"""What ``ckit vendors install`` last installed for an interpreter, so the same install is skipped.

A stamp is written after an install that confirmed (the stack imports under the torch under
test). It names what the install depended on: the vendor directory's sources (their sha256,
build outputs left out), the profile's requirements and build, the interpreter and its torch.
The next install with the very same stamp, whose stack still imports, has nothing to do: a
``make certify`` no longer reinstalls the vendor and recompiles cppnpu each time. Anything else
(an edited source, another torch, a removed package) installs again. The stamp lives in the
vendor directory's ``build/`` (ignored by git), one per interpreter.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from kit.hashing import tree_digest
from kit.vendors.profile import VendorProfile

#: Build outputs and caches: what a build writes is not a source of the next one.
_GENERATED_DIRS = frozenset({"build", "dist", "__pycache__", ".eggs", ".git", ".tox"})
_GENERATED_SUFFIXES = (".so", ".o", ".pyc", ".pyd", ".egg-info")


def _sources(directory: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs
                         if d not in _GENERATED_DIRS and not d.endswith(_GENERATED_SUFFIXES))
        for name in sorted(files):
            if not name.endswith(_GENERATED_SUFFIXES):
                yield Path(root) / name


def sources_digest(directory: Path) -> str:
    """The sha256 over every source file's relative path and content (``kit.hashing``)."""
    return tree_digest(directory, _sources(directory))


def install_stamp(profile: VendorProfile, requirements: Sequence[str], python: str,
                  torch: str) -> dict[str, Any]:
    """Everything the install of ``profile`` into ``python`` depended on."""
    return {
        "vendor": profile.id,
        "directory": str(profile.directory.resolve()),
        "python": python,
        "torch": torch,
        "requirements": list(requirements),
        "build": {"commands": list(profile.build.commands), "env": dict(profile.build.env)},
        "sources_sha256": sources_digest(profile.directory),
    }


def stamp_path(profile: VendorProfile, python: str) -> Path:
    """Where the stamp of ``profile`` installed into ``python`` lives."""
    interpreter = hashlib.sha256(python.encode()).hexdigest()[:12]
    return profile.directory / "build" / f"ckit-install-{interpreter}.json"


def read_stamp(path: Path) -> Mapping[str, Any] | None:
    """The stamp at ``path``; None when there is none or it is unreadable (then install)."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def write_stamp(path: Path, stamp: Mapping[str, Any]) -> bool:
    """Write ``stamp``; False where the directory is not writable (the next install then
    installs again, as before stamps)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stamp, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    except OSError:
        return False
    return True
