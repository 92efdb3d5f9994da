"""``ckit vendors list|validate|init|install``: working with vendor profiles."""

from __future__ import annotations

import argparse
import datetime as dt
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kit import paths
from kit.cli import add_command
from kit.clock import utc_today
from kit.errors import ExitCode, InputError, KitError
from kit.standard import Standard, load_standard
from kit.test_ids import tier_of
from kit.vendors import (
    SkipManifest,
    VendorProfile,
    list_vendor_ids,
    load_skip_manifest,
    load_vendor,
    readiness,
)
from kit.vendors.install import checked_requirements, install_vendor
from kit.vendors.scaffold import (
    DEFAULT_DEVICE_TYPE,
    PLACEHOLDERS,
    ScaffoldRequest,
    scaffold_vendor,
)
from kit.vendors.skip_limits import locked_lists, refuse_disallowed_entries

Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class VendorCheck:
    """A profile and manifest that loaded, and what is legal but worth a warning."""

    profile: VendorProfile
    warnings: tuple[str, ...]


def _error(error: KitError) -> None:
    # Same shape as kit.cli.main's boundary; these commands go on to the next vendor.
    print(f"ckit: error: {error}", file=sys.stderr)


def _warn(message: str) -> None:
    print(f"ckit: warning: {message}", file=sys.stderr)


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {value!r}") from None


# --- validate ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LockedTests:
    """The standard's locked test lists that exist so far, by tier."""

    by_tier: dict[str, list[str]]
    #: True once every tier the standard lists has its file.
    complete: bool
    #: Every tier the standard has, locked or not.
    tiers: frozenset[str] = frozenset()

    def candidates(self, pattern: str) -> list[str] | None:
        """The ids a skip pattern can be judged stale against; None when it cannot be judged."""
        tier = tier_of(pattern)
        if tier in self.by_tier:
            return self.by_tier[tier]
        if self.tiers and tier not in self.tiers and not any(c in tier for c in "*?"):
            return []  # no tier of that name (``Unit/...``): it can never match
        if self.complete and any(c in tier for c in "*?"):
            return [test_id for ids in self.by_tier.values() for test_id in ids]
        return None  # its tier has no list yet (or never has one): no evidence either way

    def all_ids(self) -> list[str]:
        return [test_id for ids in self.by_tier.values() for test_id in ids]


def locked_tests(standard: Standard) -> LockedTests:
    by_tier = locked_lists(standard)
    complete = len(by_tier) == len(standard.test_lists)
    return LockedTests(by_tier, complete, frozenset(standard.test_lists))


def _check_files(profile: VendorProfile) -> None:
    if profile.install_script and not (profile.directory / profile.install_script).is_file():
        raise InputError(
            f"{profile.profile_path}: install_script: expected a file relative to "
            f"{profile.directory}, got {profile.install_script!r} which does not exist"
        )
    checked_requirements(profile)


def _check_reasons(manifest: SkipManifest, standard: Standard) -> None:
    # kit.vendors.skips knows every reason, but the standard is the authority on its policy.
    for index, entry in enumerate(manifest.entries):
        if entry.reason not in standard.skip_reasons:
            raise InputError(
                f"{manifest.source}: skips.{index}.reason: expected one of "
                f"{', '.join(standard.skip_reasons)}, got {entry.reason!r}"
            )


def _placeholder_warnings(profile: VendorProfile) -> list[str]:
    values = {"contact": profile.contact, "docs_url": profile.docs_url}
    return [
        f"{profile.profile_path}: {name}: still holds the scaffold placeholder {value!r}"
        for name, value in values.items()
        if PLACEHOLDERS.get(name) == value
    ]


def _manifest_warnings(manifest: SkipManifest, today: dt.date) -> list[str]:
    warnings = []
    first_index: dict[str, int] = {}
    for index, entry in enumerate(manifest.entries):
        where = f"{manifest.source}: skips.{index} ({entry.test!r})"
        if entry.test in first_index:
            warnings.append(
                f"{where}: never used; skips.{first_index[entry.test]} has the same test"
            )
        first_index.setdefault(entry.test, index)
        if entry.is_expired(today):
            warnings.append(f"{where}: expired on {entry.expires}; it skips nothing and fails")
    return warnings


def load_well_formed(
    target: str, standard: Standard, locked: LockedTests
) -> tuple[VendorProfile, SkipManifest]:
    """Load one vendor's files and refuse what run start refuses (never-skip, over-long)."""
    profile = load_vendor(target)
    _check_files(profile)
    manifest = load_skip_manifest(profile.skip_manifest_path)
    _check_reasons(manifest, standard)
    refuse_disallowed_entries(manifest, standard, locked.all_ids())
    return profile, manifest


def check_vendor(
    target: str, standard: Standard, locked: LockedTests, today: dt.date
) -> VendorCheck:
    """Load and cross-check one vendor as a run would use it; the first error raises."""
    profile, manifest = load_well_formed(target, standard, locked)
    readiness.check_accepts_grade(profile, standard)
    readiness.check_device_named(profile)
    readiness.check_patterns_match(manifest, locked.candidates)
    costs = readiness.required_skip_warnings(
        manifest, standard, locked.all_ids(), profile.accepts_grade
    )
    readiness.check_imports(profile)
    warnings = _placeholder_warnings(profile) + _manifest_warnings(manifest, today)
    return VendorCheck(profile, tuple(warnings + costs))


def _targets(named: Sequence[str]) -> list[str]:
    targets = list(named) or list_vendor_ids()
    if not targets:
        raise InputError(f"{paths.vendors_dir()}: no vendor profiles (*/vendor.yaml) found")
    return targets


def run_validate(args: argparse.Namespace) -> int:
    targets = _targets(args.vendors)
    standard = load_standard()
    locked = locked_tests(standard)
    failed = False
    for target in targets:
        try:
            check = check_vendor(target, standard, locked, args.today)
        except KitError as error:
            _error(error)
            failed = True
            continue
        for warning in check.warnings:
            _warn(warning)
        print(f"OK {check.profile.id}")
    return ExitCode.INPUT_ERROR if failed else ExitCode.OK


# --- list -------------------------------------------------------------------------------------


def format_table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[col]) for row in rows) for col in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def run_list(args: argparse.Namespace) -> int:
    ids = list_vendor_ids()
    if not ids:
        print(f"no vendor profiles in {paths.vendors_dir()}")
        return ExitCode.OK
    rows = [["ID", "NAME", "DEVICE", "DTYPES"]]
    failed = False
    for vendor_id in ids:
        try:
            profile = load_vendor(vendor_id)
        except KitError as error:
            _error(error)
            failed = True
            continue
        rows.append(
            [profile.id, profile.display_name, profile.device_type, ",".join(profile.dtypes)]
        )
    for line in format_table(rows):
        print(line)
    return ExitCode.INPUT_ERROR if failed else ExitCode.OK


# --- init -------------------------------------------------------------------------------------


def run_init(args: argparse.Namespace) -> int:
    root = Path(args.root) if args.root else paths.vendors_dir()
    request = ScaffoldRequest(args.vendor_id, args.device_type, args.display_name)
    standard = load_standard()
    written = scaffold_vendor(request, root, standard, utc_today())
    directory = root / request.vendor_id
    # Well-formed from the first minute; validate passes once a device is named.
    profile, _ = load_well_formed(str(directory), standard, LockedTests({}, False))
    for path in written:
        print(f"created {path}")
    print(
        f"OK {profile.id}: now edit the files as {directory / 'README.md'} describes, then run "
        f"{_validate_command(root, profile.id)}"
    )
    return ExitCode.OK


def _validate_command(root: Path, vendor_id: str) -> str:
    """The command that validates the new profile: it names ``--vendors-dir`` where the profile
    is not where ckit looks by default, or ckit would not find it."""
    if root.resolve() == paths.vendors_dir().resolve():
        return f"ckit vendors validate {vendor_id}"
    return f"ckit --vendors-dir {shlex.quote(str(root))} vendors validate {vendor_id}"


# --- install ----------------------------------------------------------------------------------


def run_install(args: argparse.Namespace) -> int:
    profile = load_vendor(args.vendor)
    outcome = install_vendor(profile, allow_kit_deps_change=args.allow_kit_deps_change,
                             force=args.force)
    if outcome.already_installed:
        print(f"OK {outcome.vendor_id}: already installed from the same sources for this Python "
              f"and torch; imported {', '.join(outcome.modules) or 'none listed'} (--force "
              "installs it again)")
        return ExitCode.OK
    for change in outcome.kit_dep_changes:
        _warn(f"--allow-kit-deps-change: {change}")
    modules = ", ".join(outcome.modules) or "none listed"
    count = len(outcome.requirements)
    allowed = len(outcome.kit_dep_changes)
    changed = f"; changed {allowed} kit dependency(ies) as allowed" if allowed else ""
    built = f"; built (output: {outcome.build_log})" if outcome.build_log else ""
    print(
        f"OK {outcome.vendor_id}: installed {count} requirement(s){built}; imported {modules}"
        f"{changed}"
    )
    return ExitCode.OK


# --- wiring -----------------------------------------------------------------------------------


def _usage(parser: argparse.ArgumentParser) -> Handler:
    def handler(args: argparse.Namespace) -> int:
        parser.print_help()
        return ExitCode.USAGE_ERROR

    return handler


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "vendors",
        "List, validate, scaffold and install vendor profiles (vendors/<id>/vendor.yaml).",
        ["ckit vendors list", "ckit vendors validate acme", "ckit vendors init acme"],
    )
    parser.set_defaults(handler=_usage(parser))
    actions = parser.add_subparsers(dest="vendors_command", metavar="ACTION")

    listing = add_command(
        actions, "list", "Show every vendor: id, name, device type, dtypes.", ["ckit vendors list"]
    )
    listing.set_defaults(handler=run_list)

    checking = add_command(
        actions,
        "validate",
        "Validate profiles and skip manifests as a run would use them: errors for entries that "
        "skip never-skip or required tests (unless accepts_grade allows the cost), outlive the "
        "standard's limit or match no locked test, for import_modules that do not import in "
        "this Python, and for a profile that names no device yet; warn about expired entries.",
        ["ckit vendors validate", "ckit vendors validate acme ./vendors/other"],
    )
    checking.add_argument("vendors", nargs="*", metavar="ID|PATH", help="default: all vendors")
    checking.add_argument(
        "--today",
        type=_date,
        default=utc_today(),
        metavar="YYYY-MM-DD",
        help="date used to judge skip-entry expiry (default: today in UTC)",
    )
    checking.set_defaults(handler=run_validate)

    scaffolding = add_command(
        actions,
        "init",
        "Scaffold <vendors directory>/<id>/ (vendor.yaml, skips.yaml, install.sh, README.md).",
        ["ckit vendors init acme --device-type npu --display-name 'Acme NPU'",
         "ckit vendors init acme --device-type npu --dir ~/acme-conformance"],
    )
    scaffolding.add_argument("vendor_id", metavar="ID", help="lower-case id, e.g. acme")
    scaffolding.add_argument(
        "--device-type",
        default=DEFAULT_DEVICE_TYPE,
        help="torch device type (default: %(default)s)",
    )
    scaffolding.add_argument("--display-name", help="name shown in reports (default: from ID)")
    scaffolding.add_argument(
        "--dir", "--root", dest="root",
        help="the vendors directory to write into, e.g. in your own repository (default: "
        "--vendors-dir / $CKIT_VENDORS_DIR, else the kit's vendors/)",
    )
    scaffolding.set_defaults(handler=run_init)

    installing = add_command(
        actions,
        "install",
        "pip-install a vendor's requirements into this Python (torch stays pinned), run the "
        "profile's build commands, if any (a source build, its output in a log file), then "
        "import its modules to confirm. A requirement that would change a package the kit "
        "itself depends on is refused before anything is installed.",
        ["ckit vendors install acme", "ckit vendors install acme --allow-kit-deps-change"],
    )
    installing.add_argument("vendor", metavar="ID|PATH")
    installing.add_argument(
        "--allow-kit-deps-change",
        action="store_true",
        help="install even when a requirement changes one of the kit's own dependencies "
        "(each change is printed as a warning)",
    )
    installing.add_argument(
        "--force",
        action="store_true",
        help="install and build again even when the same sources were installed for this "
        "Python and torch (by default such an install only checks the stack imports)",
    )
    installing.set_defaults(handler=run_install)
