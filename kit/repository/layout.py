"""Where a submission lives in the shared repository, and which files it may hold.

``submissions/<torch-release>/<vendor>/<kit-version>/<run-id>/`` holds plain files only: the
envelope, the report files it signs and, when the run wrote golden artifacts, their manifest
and the ``golden/`` directory of the artifacts it lists.
Every path segment is a plain name from a small alphabet, so no segment can traverse, hide a
file or collide with another under case folding.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kit.errors import InputError
from kit.paths import VENDOR_ID
from kit.report.model import Report
from kit.rundir import BODY_FILES, ENVELOPE_NAME, OPTIONAL_REPORT_FILES, REPORT_HEAD, report_files

#: The top directory of every submission.
SUBMISSIONS_DIR = "submissions"
#: The repository's keyring (vendor keys, signed by the repository's root keys).
KEYRING_DIR = "keyring"
#: Files a submission may hold besides the required ones: the golden-artifact manifest, whose
#: digest the statement names when the run wrote one (the ``golden/`` directory it lists is
#: ``kit.rundir.GOLDEN_DIR``).
OPTIONAL_FILES: tuple[str, ...] = OPTIONAL_REPORT_FILES
#: All golden artifacts of a submission together (each file is within
#: ``kit.rundir.MAX_FILE_BYTES``).
MAX_GOLDEN_BYTES = 1 << 30
#: The segments of a submission's path below ``submissions/``, in order.
SEGMENTS = ("torch_release", "vendor", "kit_version", "run_id")



def required_files() -> tuple[str, ...]:
    """Files every submission of the ``report-json`` format holds: the envelope and every
    report format's file it signs."""
    return (ENVELOPE_NAME, *report_files())


def body_required_files() -> tuple[str, ...]:
    """Files every submission of the ``body`` format holds: the envelope and the body."""
    return (ENVELOPE_NAME, *BODY_FILES)


def required_files_of(present: Collection[str]) -> tuple[str, ...]:
    """The files a submission holding ``present`` must hold: a body's head makes it a body."""
    return body_required_files() if REPORT_HEAD in present else required_files()


def known_files_of(present: Collection[str]) -> tuple[str, ...]:
    """The file names a submission holding ``present`` may hold: its format's, never the
    other's (an unsigned file beside a body would be nobody's signed word)."""
    return (*required_files_of(present), *OPTIONAL_FILES)


_SEGMENT_SYNTAX = {
    "torch_release": re.compile(r"[0-9]+\.[0-9]+"),
    "vendor": VENDOR_ID,
    "kit_version": re.compile(r"[0-9]+\.[0-9]+\.[0-9]+(?:[a-z0-9.+-]{0,32})"),
    "run_id": re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{12}"),
}


def is_valid_segment(segment: str, value: str) -> bool:
    """Whether ``value`` may be the ``segment`` (one of ``SEGMENTS``) of a submission's path."""
    return bool(_SEGMENT_SYNTAX[segment].fullmatch(value))


class LayoutError(InputError):
    """A path in the repository that is not where a submission may live."""


@dataclass(frozen=True, order=True)
class SubmissionKey:
    """A submission's place: the release, vendor, kit version and run it is for."""

    torch_release: str
    vendor: str
    kit_version: str
    run_id: str

    def __post_init__(self) -> None:
        for name in SEGMENTS:
            value = getattr(self, name)
            if not _SEGMENT_SYNTAX[name].fullmatch(value):
                raise LayoutError(f"{name} {value!r} is not a valid submission path segment")

    @property
    def relative_path(self) -> PurePosixPath:
        return PurePosixPath(SUBMISSIONS_DIR, *(getattr(self, name) for name in SEGMENTS))

    def directory(self, repo_root: Path) -> Path:
        return repo_root.joinpath(*self.relative_path.parts)

    def __str__(self) -> str:
        return str(self.relative_path)


def torch_release_of(version: str) -> str:
    """``2.13`` from ``2.13.0`` (or ``2.13.0+cpu``): submissions are filed per minor release."""
    match = re.match(r"([0-9]+)\.([0-9]+)", version)
    if match is None:
        raise LayoutError(f"torch version {version!r} does not start with MAJOR.MINOR")
    return f"{match.group(1)}.{match.group(2)}"


def run_id_for(finished_at: str, payload_digest: str) -> str:
    """A submission's run id: when the run finished (UTC) and the first 12 hex digits of its
    signed payload's sha256, so two runs never share a directory."""
    stamp = re.sub(r"[^0-9]", "", finished_at)[:14]
    if len(stamp) != 14 or not re.fullmatch(r"[0-9a-f]{64}", payload_digest):
        raise LayoutError(f"cannot name a run finished {finished_at!r} ({payload_digest!r})")
    return f"{stamp[:8]}T{stamp[8:]}Z-{payload_digest[:12]}"


def submission_key_for(report: Report, payload_digest: str) -> SubmissionKey:
    """Where the report whose signed payload has sha256 ``payload_digest`` must be filed."""
    return submission_key_of(report.standard.torch_release, report.vendor_id, report.kit.version,
                             report.run.finished_at, payload_digest)


def submission_key_of(torch_release: str, vendor: str, kit_version: str,
                      finished_at: dt.datetime, payload_digest: str) -> SubmissionKey:
    """Where a report of these facts is filed (a body's are its statement's claim)."""
    finished = finished_at.astimezone(dt.UTC).isoformat()
    return SubmissionKey(
        torch_release=torch_release_of(torch_release),
        vendor=vendor,
        kit_version=kit_version,
        run_id=run_id_for(finished, payload_digest),
    )


def parse_submission_path(relative: str | PurePosixPath) -> SubmissionKey:
    """The key of ``submissions/<release>/<vendor>/<kit>/<run-id>``; ``LayoutError`` if not."""
    parts = PurePosixPath(relative).parts
    if len(parts) != 1 + len(SEGMENTS) or parts[0] != SUBMISSIONS_DIR:
        raise LayoutError(
            f"{relative} is not {SUBMISSIONS_DIR}/<torch-release>/<vendor>/<kit-version>/<run-id>"
        )
    return SubmissionKey(*parts[1:])


def find_submissions(repo_root: Path) -> list[SubmissionKey]:
    """Every submission directory of the repository, sorted; a misplaced directory raises.

    Symlinks are never followed: a link anywhere under ``submissions/`` is a layout error.
    """
    top = repo_root / SUBMISSIONS_DIR
    if not top.is_dir() or top.is_symlink():
        return []
    keys = []
    for path in _directories_at_depth(top, len(SEGMENTS)):
        keys.append(parse_submission_path(path.relative_to(repo_root).as_posix()))
    return sorted(keys)


def _directories_at_depth(top: Path, depth: int) -> list[Path]:
    level = [top]
    for _ in range(depth):
        next_level = []
        for directory in level:
            for child in sorted(directory.iterdir()):
                if child.is_symlink() or not child.is_dir():
                    raise LayoutError(
                        f"{child} is not a directory of the submission layout "
                        f"({SUBMISSIONS_DIR}/<torch-release>/<vendor>/<kit-version>/<run-id>)"
                    )
                next_level.append(child)
        level = next_level
    return level
