"""What ``ckit vendors validate`` checks beyond well-formed files: would a run work, and grade?

Each check raises ``InputError`` with one line for a problem the run would hit (a refused or
grade-costing skip, a module that does not import, a pattern that can never match, a profile
still naming no device); a grade-costing skip the profile accepts is a warning instead.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence

from kit.errors import InputError
from kit.patterns import select_ids
from kit.printable import printable
from kit.standard import Grade, Standard
from kit.vendors.profile import VendorProfile
from kit.vendors.skips import SkipEntry, SkipManifest

#: The locked ids a pattern can be judged against; None when its tier has no list yet.
CandidateLookup = Callable[[str], "list[str] | None"]
#: Device types torch registers itself; any other needs a vendor module imported first.
BUILTIN_DEVICE_TYPES = frozenset({"cpu", "cuda", "xpu", "mps"})
#: How long the vendor's modules may take to import (a real stack loads drivers).
IMPORT_TIMEOUT_S = 300.0

#: Run in the interpreter ``ckit run`` starts workers with: argv is the modules. The first that
#: fails prints ``<module>\t<first line of the error>`` on stdout and exits 1.
_IMPORT_SCRIPT = """
import importlib, sys
import torch  # vendor modules are imported after torch, as every kit process does
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        first = (str(exc).splitlines() or [""])[0]
        print(name + "\\t" + type(exc).__name__ + ": " + first)
        raise SystemExit(1)
"""


def check_device_named(profile: VendorProfile) -> None:
    """The raw scaffold names no device: an out-of-tree device type needs its module."""
    if profile.device_type in BUILTIN_DEVICE_TYPES or profile.import_modules:
        return
    raise InputError(
        f"{profile.profile_path}: device_type: {profile.device_type!r} is not a device "
        "torch registers itself and import_modules is empty: edit vendor.yaml to name the "
        "device type your backend registers and the modules that register it"
    )


def check_imports(profile: VendorProfile, python: str = sys.executable) -> None:
    """Import ``import_modules`` in a fresh ``python`` (never in the kit's own process)."""
    if not profile.import_modules:
        return
    command = [python, "-c", _IMPORT_SCRIPT, *profile.import_modules]
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, check=False, timeout=IMPORT_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise InputError(
            f"{profile.profile_path}: import_modules: importing "
            f"{', '.join(profile.import_modules)} took over {IMPORT_TIMEOUT_S:g} s in {python}"
        ) from None
    if completed.returncode == 0:
        return
    lines = completed.stdout.strip().splitlines() or [f"?\texit code {completed.returncode}"]
    module, _, problem = lines[-1].partition("\t")
    raise InputError(
        f"{profile.profile_path}: import_modules: {printable(module)!r} does not import "
        f"in {python}: {printable(problem)}"
    )


def check_patterns_match(manifest: SkipManifest, candidates_of: CandidateLookup) -> None:
    """A pattern that matches no locked test skips nothing: a typo, or case (``Unit/``)."""
    for index, entry in enumerate(manifest.entries):
        candidates = candidates_of(entry.test)
        if candidates is None or select_ids(candidates, (entry.test,)):
            continue
        raise InputError(
            f"{_where(manifest, index, entry)}: matches no test of the standard's locked test "
            "lists (patterns are case-sensitive): fix the pattern or remove the entry"
        )


def required_skip_warnings(
    manifest: SkipManifest, standard: Standard, locked_ids: Sequence[str], accepts: str | None
) -> list[str]:
    """Entries skipping required tests: an error, or warnings when the profile accepts the
    grade they cost (``accepts_grade``)."""
    required = [t for t in locked_ids if standard.is_required(t)]
    cost = grade_without_required(standard)
    warnings = []
    for index, entry in enumerate(manifest.entries):
        hits = select_ids(required, (entry.test,))
        if not hits:
            continue
        where = _where(manifest, index, entry)
        more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
        found = f"matches required test {hits[0]!r}{more}, so the run can grade {cost.name} at best"
        if not accepts_at_most(standard, accepts, cost):
            raise InputError(
                f"{where}: {found}; remove the entry, or declare accepts_grade: {cost.name} "
                "in vendor.yaml"
            )
        warnings.append(f"{where}: {found} (the profile accepts {accepts})")
    return warnings


def grade_without_required(standard: Standard) -> Grade:
    """The best grade a run that skipped a required test can get."""
    return next(g for g in standard.grades if not g.all_required_passed)


def accepts_at_most(standard: Standard, accepts: str | None, cost: Grade) -> bool:
    """Whether the profile's ``accepts_grade`` is ``cost`` or a worse grade."""
    if accepts is None:
        return False
    names = [g.name for g in standard.grades]
    return names.index(accepts) >= names.index(cost.name)


def check_accepts_grade(profile: VendorProfile, standard: Standard) -> None:
    names = [g.name for g in standard.grades]
    if profile.accepts_grade is not None and profile.accepts_grade not in names:
        raise InputError(
            f"{profile.profile_path}: accepts_grade: expected one of standard "
            f"{standard.version}'s grades {', '.join(names)}, got {profile.accepts_grade!r}"
        )


def _where(manifest: SkipManifest, index: int, entry: SkipEntry) -> str:
    return f"{manifest.source}: skips.{index} ({entry.test!r})"
