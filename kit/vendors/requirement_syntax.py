"""What a vendor requirement may be: one PEP 508 specifier or one local path, on one line.

Requirements end up as lines of a pip requirements file (the vendor image) or as pip arguments
(``ckit vendors install``). pip reads options from either (``--index-url``, ``--trusted-host``,
``-r``, ``-e``), splits lines at any line break (``str.splitlines`` also breaks at U+2028 and
friends) and expands ``${VARIABLES}``; a requirement must give it none of those, so the profile
names packages and can never reconfigure where pip fetches them from.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from packaging.requirements import InvalidRequirement, Requirement

#: A local wheel or project path: no spaces, comment marks, markers or variables for pip to read.
_LOCAL_PATH = re.compile(r"[\w./+\-\[\],]+")


def is_local_requirement(requirement: str) -> bool:
    """A path (relative to the vendor directory) rather than a pip requirement string.

    ``name @ https://.../name-1.0-py3-none-any.whl`` ends like a wheel but is a PEP 508 URL
    requirement: a wheel's file name never holds an ``@``.
    """
    if requirement.startswith((".", "/")):
        return True
    return requirement.endswith(".whl") and "@" not in requirement


def requirement_problem(requirement: str) -> str | None:
    """Why ``requirement`` may not become a pip requirements-file line; None when it may."""
    if requirement.strip().startswith("-"):
        return f"expected a requirement or a path, got the pip option {requirement!r}"
    if not requirement.isprintable():
        return (
            f"expected a single-line requirement, got {requirement!r}: a line break or control "
            "character would let pip read the rest as a line of its own"
        )
    if "${" in requirement:
        return f"expected no ${{VARIABLES}} (pip would expand them), got {requirement!r}"
    if is_local_requirement(requirement):
        if _LOCAL_PATH.fullmatch(requirement) is None:
            return (
                "expected a path of letters, digits and . _ + - / [ ] , only, "
                f"got {requirement!r}"
            )
        return None
    try:
        Requirement(requirement)
    except InvalidRequirement as exc:
        reason = str(exc).splitlines()[0]  # packaging adds the text and a caret on more lines
        return f"expected a PEP 508 requirement or a local path, got {requirement!r} ({reason})"
    return None


def torch_pin_problem(requirement: str, certified: Callable[[], str]) -> str | None:
    """Why a requirement on torch excludes the release ``certified()`` names (the standard's,
    read only for a requirement on torch); None when it does not (or names another package).
    pip would refuse it against the kit's torch constraint after minutes of resolving, in its
    own words."""
    if is_local_requirement(requirement):
        return None
    parsed = Requirement(requirement)
    if parsed.name.lower() != "torch":
        return None
    release = certified()
    if parsed.specifier.contains(release, prereleases=True):
        return None
    return (f"{requirement!r} excludes torch {release}, the release this kit's standard "
            "certifies: name torch without a version, or one that admits it")
