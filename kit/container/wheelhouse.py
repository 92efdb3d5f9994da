"""The wheelhouse: local wheels the kit layer installs from, above all the one torch wheel.

From an index, ``torch==2.13.0`` resolves to the multi-GB CUDA build; the reference images want
a specific build (``+cpu`` here, a vendor's own build elsewhere), so it must come from a
directory the user controls. By default that is the host pip's find-links directories.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kit.errors import InputError
from kit.standard import current_torch_release

_TORCH_WHEEL = re.compile(
    r"^torch-(?P<version>[^-]+)-(?P<python>[^-]+)-(?P<abi>[^-]+)-(?P<platform>[^-]+)\.whl$"
)
_DISTRIBUTION_SUFFIXES = (".whl", ".tar.gz", ".zip")


@dataclass(frozen=True)
class Wheelhouse:
    torch_wheel: Path
    #: Every other distribution found, offered to pip with ``--find-links`` (air-gapped labs).
    others: tuple[Path, ...]

    @property
    def torch_version(self) -> str:
        match = _TORCH_WHEEL.match(self.torch_wheel.name)
        assert match is not None  # only matching names are ever chosen
        return match["version"]

    @property
    def files(self) -> tuple[Path, ...]:
        return (self.torch_wheel, *self.others)


def select_wheelhouse(dirs: Sequence[Path], python: str, machine: str) -> Wheelhouse:
    """Pick the torch wheel for ``python`` (e.g. "3.11") on ``machine`` (e.g. "x86_64").

    Raises ``InputError`` unless exactly one matching torch wheel is found.
    """
    release = current_torch_release()
    if not dirs:
        raise InputError(
            "no wheelhouse: the host pip has no find-links directory; pass --wheelhouse DIR "
            f"holding the torch-{release} wheel for your device"
        )
    for directory in dirs:
        if not directory.is_dir():
            raise InputError(f"{directory}: wheelhouse directory not found")
    files = sorted({p for d in dirs for p in d.iterdir() if _is_distribution(p)})
    candidates = [p for p in files if _is_wanted_torch(p.name, python, machine, release)]
    where = ", ".join(str(d) for d in dirs)
    tag = f"cp{python.replace('.', '')}"
    if not candidates:
        raise InputError(
            f"wheelhouse {where} has no torch-{release} wheel for {tag} on {machine}; "
            f"pass --wheelhouse DIR holding one (e.g. the +cpu build from download.pytorch.org)"
        )
    if len(candidates) > 1:
        names = ", ".join(p.name for p in candidates)
        raise InputError(f"wheelhouse {where} holds several fitting torch wheels: {names}")
    others = tuple(p for p in files if not p.name.startswith("torch-"))
    return Wheelhouse(candidates[0], others)


def _is_distribution(path: Path) -> bool:
    return path.is_file() and path.name.endswith(_DISTRIBUTION_SUFFIXES)


def _is_wanted_torch(name: str, python: str, machine: str, release: str) -> bool:
    match = _TORCH_WHEEL.match(name)
    if match is None:
        return False
    public_version = match["version"].split("+", 1)[0]
    tag = f"cp{python.replace('.', '')}"
    return (
        public_version == release
        and tag in match["python"].split(".")
        and "linux" in match["platform"]
        and machine in match["platform"]
    )
