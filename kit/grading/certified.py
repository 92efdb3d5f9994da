"""What a report says was certified: the vendor's own packages, its claims, and where it ran.

Package versions are read with ``importlib.metadata`` in the kit's process: the workers run the
same interpreter with the same paths (``kit.runner.pool``), so it sees the packages they import,
without importing (running) any vendor code.
"""

from __future__ import annotations

import importlib.metadata
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from kit.bounded_read import read_regular_file
from kit.errors import InputError
from kit.vendors.profile import VendorProfile
from kit.vendors.requirement_syntax import is_local_requirement

#: A vendor project's pyproject.toml is small; a larger one is not read for its name.
MAX_PYPROJECT_BYTES = 1 << 20


def vendor_packages(profile: VendorProfile) -> list[dict[str, Any]]:
    """``[{"name", "version" (None: not installed), "from": [why it is listed]}]``, by name."""
    found: dict[str, list[str]] = {}
    for requirement in profile.requirements:
        name = _project_name(requirement, profile.directory)
        if name is not None:
            found.setdefault(name, []).append(f"requirement {requirement}")
    owners = importlib.metadata.packages_distributions()
    for module in profile.import_modules:
        if module.split(".", 1)[0] == "torch":
            continue  # the kit's own pinned torch (reported apart), never a vendor package
        for dist in owners.get(module.split(".", 1)[0], []):
            found.setdefault(canonicalize_name(dist), []).append(f"import {module}")
    return [
        {"name": name, "version": _version(name), "from": sources}
        for name, sources in sorted(found.items())
    ]


def _project_name(requirement: str, directory: Path) -> str | None:
    if not is_local_requirement(requirement):
        try:
            return canonicalize_name(Requirement(requirement).name)
        except InvalidRequirement:
            return None
    path = (directory / requirement).resolve()
    if path.suffix == ".whl":
        return canonicalize_name(path.name.split("-", 1)[0])
    return _pyproject_name(path / "pyproject.toml")


def _pyproject_name(path: Path) -> str | None:
    try:
        data = tomllib.loads(
            read_regular_file(path, limit=MAX_PYPROJECT_BYTES, what="pyproject").decode("utf-8")
        )
    except (InputError, OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None  # a project without a readable name: its import modules still name it
    name = data.get("project", {}).get("name")
    return canonicalize_name(name) if isinstance(name, str) else None


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def where_it_ran(environment: Mapping[str, Any]) -> str:
    """``host``, or ``container <image> (base <base>)``: from the report's environment."""
    container = environment.get("container")
    if not isinstance(container, Mapping):
        return "host"
    return f"container {container.get('image', '?')} (base {container.get('base', '?')})"


def packages_text(environment: Mapping[str, Any]) -> str | None:
    """``name version, ...`` of the vendor's packages; None for a report that lists none."""
    packages = environment.get("vendor_packages")
    if not isinstance(packages, list) or not packages:
        return None
    return ", ".join(
        f"{p.get('name', '?')} {p.get('version') or 'not installed'}"
        for p in packages
        if isinstance(p, Mapping)
    )
