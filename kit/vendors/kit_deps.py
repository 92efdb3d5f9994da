"""The kit's own dependencies, guarded against a vendor install that would change them.

A vendor requirement such as ``transformers==4.40.0`` would silently downgrade a package the
kit's model tier imports; the run then errors with no hint of why. ``ckit vendors install``
refuses such a requirement before pip changes anything: first by comparing the vendor's direct
requirements with the installed versions, then (pip >= 23) by asking pip's resolver, in a dry
run, which versions it would install, which also finds changes pulled in transitively.
torch is left to the install's constraint, which makes pip itself refuse another torch.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from kit.printable import printable
from kit.vendors.requirement_syntax import is_local_requirement

#: The kit's distribution name (pyproject.toml ``[project] name``).
KIT_DISTRIBUTION = "accelerator-conformance-kit"
#: Guarded by the install's torch constraint instead (pip refuses; see ``kit.vendors.install``).
CONSTRAINED = frozenset({"torch"})
DRY_RUN_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class KitDependency:
    name: str
    #: The kit's own requirement on it, as its metadata states it (e.g. ``transformers<6,>=5``).
    requirement: str
    installed: str


@dataclass(frozen=True)
class KitDepChange:
    """A vendor requirement that would change a package the kit depends on."""

    dependency: KitDependency
    #: What the vendor asks for: a version pip would install, or a specifier.
    wanted: str
    #: The requirement asking for it; None when pip's resolver pulls it in transitively.
    requirement: str | None

    def describe(self) -> str:
        dep = self.dependency
        who = (
            f"requirement {printable(self.requirement)!r}"
            if self.requirement is not None
            else "installing the requirements"
        )
        return (
            f"{who} would change {dep.name}, which the kit depends on ({dep.requirement}): "
            f"installed {dep.installed}, wanted {printable(self.wanted)}"
        )


def kit_dependencies() -> dict[str, KitDependency]:
    """The kit's runtime requirements that are installed, by canonical name."""
    try:
        raw = importlib.metadata.requires(KIT_DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return {}  # the kit runs from a source tree (a container mount): nothing recorded
    found: dict[str, KitDependency] = {}
    for line in raw:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue  # an extra (tests, linters) or another platform's dependency
        name = canonicalize_name(requirement.name)
        installed = _installed_version(name)
        if name not in CONSTRAINED and installed is not None:
            found[name] = KitDependency(name, str(requirement), installed)
    return found


def _installed_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def direct_changes(
    requirements: Sequence[str], deps: dict[str, KitDependency]
) -> list[KitDepChange]:
    """Vendor requirements on a kit dependency whose specifier excludes the installed version."""
    changes = []
    for line in requirements:
        if is_local_requirement(line):
            continue  # a path: only the dry run knows its name and version
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue  # refused with its own message by checked_requirements
        dep = deps.get(canonicalize_name(requirement.name))
        if dep is None or requirement.specifier.contains(dep.installed, prereleases=True):
            continue
        changes.append(KitDepChange(dep, str(requirement.specifier), line))
    return changes


def dry_run_changes(
    requirements: Sequence[str],
    deps: dict[str, KitDependency],
    python: str,
    constraints: Path,
) -> list[KitDepChange] | None:
    """What pip's resolver would install over a kit dependency; None when pip cannot say
    (an older pip, no index reachable): the install then relies on the direct comparison."""
    command = [
        python, "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-",
        "--constraint", str(constraints), *requirements,
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, check=False, timeout=DRY_RUN_TIMEOUT_S
        )
        report = json.loads(done.stdout) if done.returncode == 0 else None
    except (subprocess.TimeoutExpired, ValueError):
        return None
    if not isinstance(report, dict):
        return None
    return _changes_in_report(report, deps)


def _changes_in_report(
    report: dict[str, object], deps: dict[str, KitDependency]
) -> list[KitDepChange]:
    changes = []
    items = report.get("install")
    for item in items if isinstance(items, list) else []:
        metadata = item.get("metadata", {}) if isinstance(item, dict) else {}
        name, version = str(metadata.get("name", "")), str(metadata.get("version", ""))
        dep = deps.get(canonicalize_name(name))
        if dep is not None and version != dep.installed:
            changes.append(KitDepChange(dep, version, None))
    return changes
