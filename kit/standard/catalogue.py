"""The standards this kit carries, and which of them a run uses.

A carried standard is a directory of the standards root (``kit.paths.standards_dir()``) named
like a version (``v1``, ``v2``, ...) that holds a ``standard.yaml``. Versions order by their
number: ``v10`` is newer than ``v9``. A run uses the kit's current standard: the newest carried
standard whose ``torch_release`` is the installed torch's release, or the newest of all when
none is (the run's grade then says the release is not certified). A report is judged under the
standard its own ``standard.version`` names, whichever is current.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from kit import paths
from kit.errors import EnvironmentProblem, InputError
from kit.standard.inheritance import STANDARD_FILE, VERSION_PATTERN, read_standard_source


def torch_release_of(version: str) -> str:
    """The release a torch version string names: its local build label dropped.

    ``2.13.0+cpu`` and ``2.13.0+cu130`` are release ``2.13.0``; a pre-, post- or dev release
    (``2.13.0rc1``, ``2.13.0.dev20260101+cpu``) is a release of its own.
    """
    return version.split("+", 1)[0]


def _number(version: str) -> int:
    return int(version[1:])


def carried_versions(root: Path | None = None) -> tuple[str, ...]:
    """The versions of the standards under ``root`` (default: the kit's), oldest first."""
    root = root or paths.standards_dir()
    if not root.is_dir():
        return ()
    found = [
        entry.name for entry in root.iterdir()
        if VERSION_PATTERN.fullmatch(entry.name) and (entry / STANDARD_FILE).is_file()
    ]
    return tuple(sorted(found, key=_number))


def standard_directory(version: str | None = None) -> Path:
    """The directory of carried standard ``version`` (default: the current one); a one-line
    ``InputError`` naming the carried ones when the kit carries no such standard."""
    version = version or current_version()
    carried = carried_versions()
    if version not in carried:
        shown = repr(version) if len(version) <= 40 else f"{version[:40]!r}..."
        raise InputError(
            f"standard {shown} is not carried by this kit (it carries "
            f"{', '.join(carried) or 'none'}, in {paths.standards_dir()})"
        )
    return paths.standards_dir() / version


def installed_torch_version() -> str | None:
    """The installed torch distribution's version, without importing torch (seconds)."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


def current_version(torch_version: str | None = None) -> str:
    """The version a run uses: the newest carried standard certifying ``torch_version``
    (default: the installed torch's), else the newest carried standard."""
    carried = carried_versions()
    if not carried:
        raise InputError(f"{paths.standards_dir()}: no standard here (a vN/{STANDARD_FILE})")
    installed = torch_version or installed_torch_version()
    if installed is None:
        return carried[-1]
    release = torch_release_of(installed)
    certifying = [v for v in carried if _torch_release(v) == release]
    return (certifying or carried)[-1]


def _torch_release(version: str) -> str:
    data = read_standard_source(paths.standards_dir() / version).data
    return str(data.get("torch_release"))


def require_certifying_standard(canary: bool) -> None:
    """Before any test: the installed torch is a release a carried standard certifies, or the
    run is a ``--canary`` (graded under the newest standard, never a certificate) on one that
    is not. One line naming the certified releases otherwise."""
    installed = installed_torch_version()
    if installed is None:
        return  # the run's own environment check names what is missing
    release = torch_release_of(installed)
    releases = {version: _torch_release(version) for version in carried_versions()}
    certifying = [version for version, named in releases.items() if named == release]
    if certifying and canary:
        raise InputError(f"--canary: torch {installed} is certified by standard "
                         f"{certifying[-1]}; run without --canary for a certifiable run")
    if not certifying and not canary:
        named = ", ".join(sorted(set(releases.values()))) or "none"
        raise EnvironmentProblem(
            f"torch {installed} has no standard in this kit (it certifies PyTorch {named}): "
            "install a certified torch, or run `ckit run --canary` for a graded run that is "
            "never a certificate"
        )
