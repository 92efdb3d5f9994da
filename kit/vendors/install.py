"""``ckit vendors install``: put a vendor's stack into the interpreter that runs the kit.

pip always runs with a constraint pinning torch to the release the kit certifies, so a vendor
requirement can never swap PyTorch out from under the standard: pip refuses instead. A
requirement that would change another of the kit's own dependencies is refused before pip
installs anything (``kit.vendors.kit_deps``) unless the user allows it. The stack is
then confirmed in a fresh interpreter, which sees what pip just installed (``.pth`` files,
editable installs) exactly as the next ``ckit run`` will. A profile's ``build`` commands (a source
build, ``kit.vendors.build``) run between the two, under the same torch constraint.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kit.errors import DeviceError, EnvironmentProblem, InputError
from kit.standard import current_torch_release
from kit.standard.catalogue import installed_torch_version, torch_release_of
from kit.vendors.build import run_build
from kit.vendors.install_stamp import (
    install_stamp,
    read_stamp,
    sources_digest,
    stamp_path,
    write_stamp,
)
from kit.vendors.kit_deps import (
    KitDepChange,
    direct_changes,
    dry_run_changes,
    kit_dependencies,
)
from kit.vendors.profile import VendorProfile
from kit.vendors.requirement_syntax import is_local_requirement, requirement_problem

#: Run in the target interpreter: argv is (torch release, module, ...). On failure it prints one
#: last stderr line ``<step>\t<problem>`` and exits 1.
_CONFIRM_SCRIPT = """
import importlib, importlib.metadata, sys
release, modules = sys.argv[1], sys.argv[2:]
def fail(step, problem):
    print(step + "\\t" + " ".join(str(problem).split()), file=sys.stderr)
    raise SystemExit(1)
try:
    found = importlib.metadata.version("torch")
except importlib.metadata.PackageNotFoundError:
    found = None
if found is not None and found.split("+")[0] != release:
    fail("check torch", f"torch {found} is installed; the kit certifies torch {release}")
if found is not None:
    import torch  # vendor modules are imported after torch, as every kit process does
for name in modules:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        fail("import " + name, f"{type(exc).__name__}: {exc}")
"""


@dataclass(frozen=True)
class InstallOutcome:
    vendor_id: str
    requirements: tuple[str, ...]
    modules: tuple[str, ...]
    #: Changes to the kit's own dependencies let through by ``--allow-kit-deps-change``.
    kit_dep_changes: tuple[str, ...] = ()
    #: The output of the profile's build commands, if it has any.
    build_log: Path | None = None
    #: The same sources were installed for this interpreter and torch: nothing was run but
    #: the import check (``kit.vendors.install_stamp``).
    already_installed: bool = False


def torch_under_test() -> str:
    """The release an install must keep: the installed torch's (a canary's environment may hold
    one no carried standard certifies yet), else the one the kit's current standard certifies."""
    installed = installed_torch_version()
    return torch_release_of(installed) if installed else current_torch_release()


def torch_constraint() -> str:
    """The constraint-file line that keeps pip from replacing the torch under test."""
    return f"torch=={torch_under_test()}\n"


def checked_requirements(profile: VendorProfile) -> list[str]:
    """The profile's resolved requirements, refusing pip options and missing local paths."""
    resolved = profile.resolved_requirements()
    for index, (raw, final) in enumerate(zip(profile.requirements, resolved, strict=True)):
        where = f"{profile.profile_path}: requirements.{index}"
        problem = requirement_problem(raw)
        if problem is not None:
            # Checked when the profile loads; again here, the last step before pip sees it.
            raise InputError(f"{where}: {problem}")
        if is_local_requirement(raw) and not Path(final).exists():
            raise InputError(
                f"{where}: expected a wheel or project path relative to {profile.directory}, "
                f"got {raw!r} which does not exist"
            )
    return resolved


def _first_error_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line.removeprefix("ERROR:").strip() for line in lines if line.startswith("ERROR:")]
    return (errors or lines or ["no error output"])[0]


def _keep_log(text: str) -> Path:
    """Save pip's full error output: the one-line message points at it for the details."""
    handle = tempfile.NamedTemporaryFile(
        "w", prefix="ckit-pip-", suffix=".log", delete=False, encoding="utf-8"
    )
    with handle:
        handle.write(text)
    return Path(handle.name)


def pip_install(vendor_id: str, requirements: Sequence[str], python: str) -> None:
    """``python -m pip install`` under the torch constraint, quiet: one line says what it
    installs, pip's errors come in full in a log file."""
    print(f"vendors install {vendor_id}: pip install {len(requirements)} requirement(s)",
          flush=True)
    with constraints_file() as constraints:
        command = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                   "--constraint", str(constraints), *requirements]
        completed = subprocess.run(command, stderr=subprocess.PIPE, text=True, check=False)
    if completed.returncode != 0:
        log = _keep_log(completed.stderr)
        raise EnvironmentProblem(
            f"vendors install {vendor_id}: step 'pip install' failed (exit {completed.returncode})"
            f": {_first_error_line(completed.stderr)} (pip's error output: {log})"
        )
    sys.stderr.write(completed.stderr)  # pip's warnings, if any, still reach the user


@contextlib.contextmanager
def constraints_file() -> Iterator[Path]:
    """A temporary pip constraints file holding ``torch_constraint()``."""
    with tempfile.TemporaryDirectory(prefix="ckit-install-") as scratch:
        constraints = Path(scratch) / "constraints.txt"
        constraints.write_text(torch_constraint(), encoding="utf-8")
        yield constraints


def kit_dep_changes(requirements: Sequence[str], python: str) -> list[KitDepChange]:
    """What installing ``requirements`` would change among the kit's own dependencies:
    the direct comparison first (no pip, no network), then pip's dry run."""
    deps = kit_dependencies()
    changes = direct_changes(requirements, deps)
    if changes or not requirements or not deps:
        return changes
    with constraints_file() as constraints:
        return dry_run_changes(requirements, deps, python, constraints) or []


def guard_kit_deps(
    vendor_id: str, requirements: Sequence[str], python: str, allow: bool
) -> tuple[str, ...]:
    """Refuse (before pip installs anything) a change to a kit dependency unless ``allow``;
    returns the changes let through, for the install's output."""
    changes = kit_dep_changes(requirements, python)
    if changes and not allow:
        more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
        raise InputError(
            f"vendors install {vendor_id}: {changes[0].describe()}{more}; nothing was "
            "installed (--allow-kit-deps-change installs it anyway)"
        )
    return tuple(change.describe() for change in changes)


def confirm_stack(vendor_id: str, modules: Sequence[str], python: str) -> None:
    """Import the vendor modules in a fresh ``python`` and check torch is still the release."""
    command = [python, "-c", _CONFIRM_SCRIPT, torch_under_test(), *modules]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode == 0:
        return
    last = (completed.stderr.strip().splitlines() or ["confirm\tno error output"])[-1]
    step, _, problem = last.partition("\t")
    if not problem:
        step, problem = "confirm", last
    raise DeviceError(f"vendors install {vendor_id}: step '{step}' failed: {problem}")


def _unchanged(profile: VendorProfile, stamp: dict[str, object], python: str) -> bool:
    """Whether ``stamp`` is what the last confirmed install of ``profile`` left, and its stack
    still imports (a package removed since is installed again)."""
    if read_stamp(stamp_path(profile, python)) != stamp:
        return False
    try:
        confirm_stack(profile.id, profile.import_modules, python)
    except DeviceError:
        return False
    return True


def install_vendor(
    profile: VendorProfile, python: str = sys.executable, allow_kit_deps_change: bool = False,
    force: bool = False,
) -> InstallOutcome:
    """Install ``profile``'s stack into ``python``; skipped (``already_installed``) where the
    same sources were installed for the same interpreter and torch, unless ``force``."""
    requirements = checked_requirements(profile)
    stamp = install_stamp(profile, requirements, python, installed_torch_version() or "none")
    if not force and _unchanged(profile, stamp, python):
        return InstallOutcome(profile.id, tuple(requirements), profile.import_modules,
                              already_installed=True)
    with contextlib.suppress(OSError):  # no stamp while the install is partial
        stamp_path(profile, python).unlink(missing_ok=True)
    allowed = guard_kit_deps(profile.id, requirements, python, allow_kit_deps_change)
    if requirements:
        pip_install(profile.id, requirements, python)
    build_log = None
    if profile.build.commands:
        with constraints_file() as constraints:
            build_log = run_build(profile, python, constraints)
    confirm_stack(profile.id, profile.import_modules, python)
    # The sources as the build left them: a build that writes beside its sources matches the
    # next install's stamp all the same.
    stamp["sources_sha256"] = sources_digest(profile.directory)
    write_stamp(stamp_path(profile, python), stamp)
    return InstallOutcome(
        profile.id, tuple(requirements), profile.import_modules, allowed, build_log
    )
