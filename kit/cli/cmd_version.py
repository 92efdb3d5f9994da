"""``ckit version``: which kit this is, by version and by digest, and whether it is a release.

The digest (``kit.hashing.kit_digest``) covers every file of the kit's code and standards: a
checkout with one loosened tolerance has another digest, whatever its version says. A release
lists its digest in standards/released-kits.yaml, printed here with ``--digest``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import TypedDict

import kit
from kit.cli import add_command
from kit.errors import ExitCode
from kit.grading.released import ReleasedKit, load_released_kits
from kit.hashing import RELEASED_KITS, kit_digest, released_kits_path
from kit.printable import printable
from kit.standard import load_standard


class ReleaseJson(TypedDict):
    version: str
    date: str


class KitIdentityJson(TypedDict):
    """``ckit version --json``."""

    version: str
    standard: str
    torch_release: str
    digest: str
    released: bool
    release: ReleaseJson | None
    released_kits: str


@dataclass(frozen=True)
class KitIdentity:
    version: str
    standard: str
    torch_release: str
    digest: str
    #: The release whose digest this is; None for an unreleased (development) kit.
    release: ReleasedKit | None

    @property
    def release_line(self) -> str:
        if self.release is None:
            return f"not a released kit: digest not in standards/{RELEASED_KITS}"
        return f"released kit {self.release.version} of {self.release.date.isoformat()}"

    def to_json(self) -> KitIdentityJson:
        release = self.release
        return {
            "version": self.version,
            "standard": self.standard,
            "torch_release": self.torch_release,
            "digest": self.digest,
            "released": release is not None,
            "release": None if release is None else {
                "version": release.version, "date": release.date.isoformat()
            },
            "released_kits": str(released_kits_path()),
        }


def running_kit() -> KitIdentity:
    digest = kit_digest()
    release = next((k for k in load_released_kits() if k.digest == digest), None)
    standard = load_standard()
    return KitIdentity(
        kit.__version__, standard.version, standard.torch_release, digest, release
    )


def _version(args: argparse.Namespace) -> int:
    identity = running_kit()
    if args.digest:
        print(identity.digest)
    elif args.json:
        print(json.dumps(identity.to_json(), indent=2))
    else:
        lines = [
            f"ckit {identity.version}",
            f"standard: {identity.standard}",
            f"torch release: {identity.torch_release}",
            f"kit digest: {identity.digest}",
            identity.release_line,  # the release's version comes from the list: printable
        ]
        for line in lines:
            print(printable(line))
    return ExitCode.OK


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "version",
        "print the kit version, its standard and torch release, the running kit's digest and "
        "whether that digest is a released kit's",
        ["ckit version", "ckit version --json", "ckit version --digest"],
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print it as a JSON object")
    shown.add_argument(
        "--digest",
        action="store_true",
        help=f"print only the kit digest (what a release lists in standards/{RELEASED_KITS})",
    )
    parser.set_defaults(handler=_version)
