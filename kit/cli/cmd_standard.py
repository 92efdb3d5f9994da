"""``ckit standard``: show the kit's current standard, and regenerate its locked test lists.

A standard that extends another judges by its parent's lists until it has its own: ``lock``
compares with the list the standard judges by (its own, else inherited) and writes into the
standard's own directory.
"""

from __future__ import annotations

import argparse
import json

from kit.cli import add_command
from kit.cli.standard_corpus import register_check_corpus
from kit.cli.standard_databases import database_lines, database_table
from kit.cli.standard_lock import lock_tiers
from kit.cli.standard_new import register_list, register_new
from kit.errors import ExitCode
from kit.standard import Standard, load_standard
from kit.tiers.registry import tier_names


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "standard",
        "show the conformance standard or regenerate its locked test lists",
        ["ckit standard show", "ckit standard lock --tier unit"],
    )
    actions = parser.add_subparsers(dest="standard_command", metavar="ACTION", required=True)

    show = add_command(
        actions,
        "show",
        "print the standard's version, torch release, test counts and skip policy",
        ["ckit standard show", "ckit standard show --json"],
    )
    show.add_argument("--json", action="store_true", help="print one JSON object instead")
    show.set_defaults(handler=show_standard)

    lock = add_command(
        actions,
        "lock",
        "regenerate the standard's locked lists (tests/<tier>.txt in its own directory) from the "
        "tier definitions",
        ["ckit standard lock", "ckit standard lock --tier unit --check"],
    )
    lock.add_argument(
        "--tier",
        choices=[*tier_names(), "all"],
        default="all",
        help="which tier's list to regenerate (default: all)",
    )
    lock.add_argument(
        "--check",
        action="store_true",
        help="write nothing; fail if a locked list differs from what the tier generates",
    )
    lock.set_defaults(handler=lock_standard)
    register_check_corpus(actions)
    register_new(actions)
    register_list(actions)


def lock_standard(args: argparse.Namespace) -> int:
    tiers = list(tier_names()) if args.tier == "all" else [args.tier]
    lock_tiers(load_standard(), tiers, check=args.check)
    return int(ExitCode.OK)


def show_standard(args: argparse.Namespace) -> int:
    standard = load_standard()
    counts = {tier: _locked_count(standard, tier) for tier in standard.test_lists}
    databases = database_table(standard)
    summary = {
        "version": standard.version,
        "torch_release": standard.torch_release,
        "directory": str(standard.directory),
        "extends": standard.extends,
        "tests": counts,
        "required": {tier: list(p) for tier, p in standard.required.items()},
        "never_skip": list(standard.never_skip),
        "skip_reasons": list(standard.skip_reasons),
        "released": standard.released.isoformat(),
        "latest_skip_expiry": standard.latest_skip_expiry.isoformat(),
        "databases": None if databases is None else databases.to_json(),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return int(ExitCode.OK)
    print(
        f"standard {standard.version} for PyTorch {standard.torch_release} ({standard.directory})"
    )
    if standard.extends is not None:
        print(f"extends standard {standard.extends}: files it does not carry come from "
              f"{', '.join(str(d) for d in standard.inherited)}")
    print("tests per tier (locked lists):")
    for tier, count in counts.items():
        shown = "missing: run `ckit standard lock`" if count is None else str(count)
        print(f"  {tier}: {shown}")
    print("required (must run and pass for a conformant grade):")
    for tier, patterns in standard.required.items():
        print(f"  {tier}: {', '.join(patterns)}")
    print("never skip (a skip manifest entry matching these is refused):")
    for pattern in standard.never_skip:
        print(f"  {pattern}")
    print(f"skip reasons: {', '.join(standard.skip_reasons)}")
    print(
        f"skip expiry: at most {standard.max_skip_days} days after the standard's release "
        f"({standard.released}), so {standard.latest_skip_expiry} at the latest"
    )
    for line in database_lines(databases):
        print(line)
    return int(ExitCode.OK)


def _locked_count(standard: Standard, tier: str) -> int | None:
    if not standard.test_list_path(tier).exists():
        return None
    return len(standard.test_ids(tier))
