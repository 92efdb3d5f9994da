"""``ckit standard new`` and ``ckit standard list``: a standard per PyTorch release.

``new`` writes a standard that extends an older one and names the installed torch's release:
its ``standard.yaml`` (what changes, nothing else: numerics, grades and tier files are
inherited), its own ``acceptance.yaml`` (which names its standard), its locked test lists
regenerated from the installed torch, and ``tests/changes.yaml``: per tier, the tests added,
removed and whose inputs changed against the parent's lists, with their counts. Run it with
the new torch installed: the lists are what that torch's OpInfo and model sources generate.
"""

from __future__ import annotations

import argparse
import datetime
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from kit import paths
from kit.cli import add_command
from kit.cli.standard_lock import lock_tiers
from kit.errors import ExitCode, InputError
from kit.standard import REPORT_FORMATS, Standard, load_standard
from kit.standard.catalogue import (
    carried_versions,
    current_version,
    installed_torch_version,
    torch_release_of,
)
from kit.standard.inheritance import STANDARD_FILE
from kit.tiers.registry import tier_names

#: Where a new standard records how its tests differ from its parent's.
CHANGES_FILE = "tests/changes.yaml"
ACCEPTANCE_FILE = "acceptance.yaml"
_RELEASE = re.compile(r"\d+\.\d+\.\d+")


def register_new(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    new = add_command(
        actions,
        "new",
        "write a standard for the installed torch's release that extends --from, with its "
        "test lists regenerated and their changes against the parent's",
        ["ckit standard new", "ckit standard new --from v2 --torch 2.14.0 --version v3"],
    )
    new.add_argument("--from", dest="parent", metavar="VERSION",
                     help="the carried standard the new one extends (default: the newest)")
    new.add_argument("--torch", metavar="X.Y.Z",
                     help="the release the new standard certifies (default and only accepted "
                          "value: the installed torch's)")
    new.add_argument("--version", metavar="VERSION",
                     help="the new standard's version (default: the next vN)")
    new.set_defaults(handler=new_standard)


def register_list(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    listing = add_command(
        actions,
        "list",
        "print the standards this kit carries, the release each certifies and which is current",
        ["ckit standard list"],
    )
    listing.set_defaults(handler=list_standards)


def new_standard(args: argparse.Namespace) -> int:
    parent = load_standard(args.parent or _newest_version())
    release = _installed_release(args.torch)
    version = args.version or _next_version()
    directory = paths.standards_dir() / version
    _refuse_existing(version, directory)
    directory.mkdir()
    try:
        changes = _write_standard(directory, version, parent, release)
    except BaseException:
        # A half-written standard would be carried (and current): nothing of it stays.
        shutil.rmtree(directory)
        raise
    for tier, change in changes.items():
        counts = ", ".join(f"{change.count(kind)} {kind}" for kind in CHANGE_KINDS)
        print(f"{tier}: {counts} (against {parent.version})")
    print(f"standard {version} for PyTorch {release} written to {directory}; check its numerics "
          f"on recorded device outputs: ckit standard check-corpus FILE")
    return int(ExitCode.OK)


def _write_standard(directory: Path, version: str, parent: Standard, release: str
                    ) -> dict[str, TierChanges]:
    _write_standard_file(directory, version, parent, release)
    _write_acceptance(directory, version, parent, release)
    child = load_standard(directory=directory)
    tiers = [tier for tier in tier_names() if tier in child.test_lists]
    # The parent's lists stay as they are: its ids keep naming its release's inputs there.
    lock_tiers(child, tiers, check=False, new_release=release != parent.torch_release)
    changes = {tier: _tier_changes(parent, child, tier) for tier in tiers}
    (directory / CHANGES_FILE).write_text(_render_changes(parent, changes), encoding="utf-8")
    return changes


def _installed_release(asked: str | None) -> str:
    installed = installed_torch_version()
    if installed is None:
        raise InputError("torch is not installed: a standard's lists come from the installed torch")
    release = torch_release_of(installed)
    if asked is not None and asked != release:
        raise InputError(f"--torch {asked}: the installed torch is {installed}; install torch "
                         f"{asked} first (the new standard's tests are generated from it)")
    if not _RELEASE.fullmatch(release):
        raise InputError(f"installed torch {installed} is not a release (X.Y.Z): a standard "
                         "certifies releases; run its tests with `ckit run --canary`")
    return release


def _newest_version() -> str:
    carried = carried_versions()
    if not carried:
        raise InputError(f"{paths.standards_dir()}: no standard to extend; pass --from VERSION")
    return carried[-1]


def _next_version() -> str:
    carried = carried_versions()
    return f"v{int(carried[-1][1:]) + 1}" if carried else "v1"


def _refuse_existing(version: str, directory: Path) -> None:
    if not re.fullmatch(r"v\d+", version):
        raise InputError(f"--version {version!r}: expected vN")
    if directory.exists():
        raise InputError(f"{directory}: already exists (standard {version} is carried)")


def _write_standard_file(directory: Path, version: str, parent: Standard, release: str) -> None:
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    text = (
        f"# Conformance standard {version} for PyTorch {release}: {parent.version}'s rules "
        f"(standards/README.md),\n# its test lists regenerated from torch {release} "
        f"(`ckit standard new`; their changes: {CHANGES_FILE}).\n"
        f"version: {version}\nextends: {parent.version}\ntorch_release: \"{release}\"\n"
        f"released: {today}\n{_report_format_lines(parent)}"
    )
    (directory / STANDARD_FILE).write_text(text, encoding="utf-8")


def _report_format_lines(parent: Standard) -> str:
    """A new standard's reports take the kit's newest format (``REPORT_FORMATS``' last); one
    extending a standard of that format inherits it."""
    newest = REPORT_FORMATS[-1]
    if parent.report_format == newest:
        return ""
    return ("# Reports in the kit's newest format (REPORT_FORMATS, kit/standard/__init__.py; "
            "standards/README.md).\n"
            f"report_format: {newest}\n")


def _write_acceptance(directory: Path, version: str, parent: Standard, release: str) -> None:
    """The parent's acceptance policy, naming the new standard and release (a policy names
    its standard, so an inherited one would refuse the child's reports)."""
    source = parent.file(ACCEPTANCE_FILE)
    if not source.is_file():
        return
    text = source.read_text(encoding="utf-8")
    text = re.sub(r"(?m)^standard: \S+", f"standard: {version}", text)
    text = text.replace(f"standards/{parent.version}/", f"standards/{version}/")
    minor = ".".join(release.split(".")[:2])
    text = re.sub(r'(?m)^torch_release: "[^"]*"', f'torch_release: "{minor}"', text)
    (directory / ACCEPTANCE_FILE).write_text(text, encoding="utf-8")


#: How each test of a new standard's lists, or of its parent's, compares with the parent's:
#: the same inputs; other inputs under the same id (the new standard's list records the new
#: digest: an id names its inputs within one standard, so a result is never paired with the
#: other release's inputs); no longer generated (no such sample, variant, op or model in the
#: release); new.
CHANGE_KINDS = ("same", "changed-inputs", "vanished", "added")
#: Ids listed per kind in the change file; ``same`` is counted, and its first ids shown.
_SAME_EXAMPLES = 5


@dataclass(frozen=True)
class TierChanges:
    ids: dict[str, list[str]]

    def count(self, kind: str) -> int:
        return len(self.ids[kind])


def _tier_changes(parent: Standard, child: Standard, tier: str) -> TierChanges:
    before = _locked(parent, tier)
    after = _locked(child, tier)
    both = set(before) & set(after)
    changed = {i for i in both if before[i] and after[i] and before[i] != after[i]}
    return TierChanges({
        "same": sorted(both - changed),
        "changed-inputs": sorted(changed),
        "vanished": sorted(set(before) - set(after)),
        "added": sorted(set(after) - set(before)),
    })


def _locked(standard: Standard, tier: str) -> Mapping[str, str]:
    """Per locked id, its input digest ("" where the tier's list records none)."""
    path = standard.test_list_path(tier)
    if not path.is_file():
        return {}
    digests = standard.input_digests(tier)
    return digests or {test_id: "" for test_id in standard.test_ids(tier)}


def _render_changes(parent: Standard, changes: dict[str, TierChanges]) -> str:
    body = {tier: {kind: _kind_entry(kind, change.ids[kind]) for kind in CHANGE_KINDS}
            for tier, change in changes.items()}
    header = (f"# Tests of this standard against {parent.version}'s locked lists "
              f"(written by `ckit standard new`; kinds: standard_new.CHANGE_KINDS).\n")
    return header + yaml.safe_dump({"against": parent.version, "tiers": body}, sort_keys=False)


def _kind_entry(kind: str, ids: list[str]) -> dict[str, object]:
    if kind == "same":
        return {"count": len(ids), "examples": ids[:_SAME_EXAMPLES]}
    return {"count": len(ids), "tests": ids}


def list_standards(args: argparse.Namespace) -> int:
    current = current_version()
    installed = installed_torch_version() or "not installed"
    for version in carried_versions():
        standard = load_standard(version)
        parent = f", extends {standard.extends}" if standard.extends else ""
        marker = "  (current)" if version == current else ""
        print(f"{version}: PyTorch {standard.torch_release}, released {standard.released}"
              f"{parent}{marker}")
    print(f"installed torch: {installed}")
    return int(ExitCode.OK)
