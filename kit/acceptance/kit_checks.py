"""Acceptance checks on the kit and standard that judged a run: released kit, standard, torch."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import ClassVar

from kit.errors import InputError
from kit.grading.released import ReleasedKit
from kit.hashing import RELEASED_KITS
from kit.report.model import Report
from kit.standard import torch_release_of
from kit.standard.inheritance import VERSION_PATTERN
from kit.verification.content import KitStanding

#: A torch release a policy names: ``2.13`` (any 2.13.x) or ``2.13.0``.
TORCH_RELEASE = re.compile(r"[0-9]+\.[0-9]+(\.[0-9]+)?")
#: A standard's version: the name of its directory under standards/.
STANDARD_VERSION = VERSION_PATTERN


@dataclass(frozen=True)
class ReleasedKitCheck:
    """The report's kit digest is a released kit's, of the version the report names.

    It judges the digest against the list itself, not the report's ``kit.released`` claim: a
    kit loosened locally has another digest, whatever its report says.
    """

    released_kits: tuple[ReleasedKit, ...]
    #: The list's file as the reader knows it (an auditor's may be a repository's own).
    source: str = f"standards/{RELEASED_KITS}"
    name: ClassVar[str] = "released-kit"

    def describe(self) -> str:
        return f"the kit that judged the run is a released kit ({self.source})"

    def check(self, report: Report, standing: KitStanding, now: dt.datetime) -> str | None:
        kit = report.kit
        release = next((k for k in self.released_kits if k.digest == kit.digest), None)
        if release is None:
            return (
                f"kit {kit.version} with digest {kit.digest[:16]} is not a released kit: its "
                f"digest is not in {self.source}"
            )
        if release.version != kit.version:
            return (
                f"digest {kit.digest[:16]} is released kit {release.version}, but the report "
                f"names kit {kit.version}"
            )
        return None


@dataclass(frozen=True)
class StandardCheck:
    """The run was judged against this standard."""

    version: str
    name: ClassVar[str] = "standard"

    def __post_init__(self) -> None:
        if not STANDARD_VERSION.fullmatch(self.version):
            raise InputError(f"standard {self.version!r}: expected a version such as v1")

    def describe(self) -> str:
        return f"the run was judged against standard {self.version}"

    def check(self, report: Report, standing: KitStanding, now: dt.datetime) -> str | None:
        if report.standard.version == self.version:
            return None
        return f"the run was judged against standard {report.standard.version}, not {self.version}"


def _of_release(version: str, release: str) -> bool:
    """Whether torch ``version`` (local label dropped) is ``release`` or one of its patches."""
    named = torch_release_of(version)
    return named == release or named.startswith(f"{release}.")


@dataclass(frozen=True)
class TorchReleaseCheck:
    """The standard certifies this torch release, and the run ran on it."""

    release: str
    name: ClassVar[str] = "torch-release"

    def __post_init__(self) -> None:
        if not TORCH_RELEASE.fullmatch(self.release):
            raise InputError(
                f"torch release {self.release!r}: expected MAJOR.MINOR or MAJOR.MINOR.PATCH "
                "such as 2.13"
            )

    def describe(self) -> str:
        return f"the run certifies torch {self.release} and ran on it"

    def check(self, report: Report, standing: KitStanding, now: dt.datetime) -> str | None:
        certified = report.standard.torch_release
        if not _of_release(certified, self.release):
            return (
                f"standard {report.standard.version} certifies torch {certified}, "
                f"not {self.release}"
            )
        ran = str(report.environment["torch"]["version"])
        if not _of_release(ran, self.release):
            return f"the run ran torch {ran}, not {self.release}"
        return None


@dataclass(frozen=True)
class StandardsByReleaseCheck:
    """The run was judged against one of these standards, and certifies and ran on the torch
    release listed with it: a repository that takes submissions for several releases (``ckit
    repo init`` lists, per carried release, the newest standard certifying it)."""

    #: (torch release, standard version) pairs, in the policy's order.
    pairs: tuple[tuple[str, str], ...]
    name: ClassVar[str] = "standards"

    def __post_init__(self) -> None:
        if not self.pairs:
            raise InputError("standards: name at least one torch release and its standard")
        for release, version in self.pairs:
            TorchReleaseCheck(release)
            StandardCheck(version)

    def describe(self) -> str:
        return "the run was judged against " + self._accepted()

    def _accepted(self) -> str:
        return ", ".join(f"standard {version} (torch {release})" for release, version in self.pairs)

    def check(self, report: Report, standing: KitStanding, now: dt.datetime) -> str | None:
        version = report.standard.version
        releases = [release for release, listed in self.pairs if listed == version]
        if not releases:
            return f"the run was judged against standard {version}, not {self._accepted()}"
        problems = [TorchReleaseCheck(release).check(report, standing, now) for release in releases]
        return None if None in problems else problems[0]
