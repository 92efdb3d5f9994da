"""The checks of one submission, 1 to 7 of ``ckit audit``'s checklist (see ``audit``; 10, the
golden artifacts, is ``golden_sample``).

Each returns a ``CheckResult``; a failing one says why in one line, with every name a submitter
chose passed through ``printable``. Checks 2 and 6 are the verifier's own steps (1-11, then 12).
"""

from __future__ import annotations

import datetime as dt
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.errors import KitError, VerificationError
from kit.grading.build import missing_ids
from kit.grading.policy import EXPIRED_SKIP, NEVER_SKIP, SKIP_TOO_LONG
from kit.grading.regrade import recomputed_violations
from kit.grading.released import ReleasedKit
from kit.hashing import sha256_bytes
from kit.printable import printable
from kit.report.model import Report
from kit.repository.interface import CheckResult
from kit.repository.layout import (
    LayoutError,
    SubmissionKey,
    known_files_of,
    required_files_of,
    submission_key_for,
)
from kit.rundir import GOLDEN_DIR, GOLDEN_MANIFEST, MAX_FILE_BYTES, REPORT_JSON, RunDir
from kit.standard import Standard
from kit.verification.verify import (
    VerifiedReport,
    step1_read_envelope,
    step12_check_grade,
    step13_check_derived_files,
    verify_before_grade,
)

LAYOUT, INTEGRITY, PATH, REQUIRED, SKIPS, GRADE, REPLAY, POLICY, KEY, GOLDEN, DERIVED = range(1, 12)
TITLES = {
    LAYOUT: "layout and names",
    INTEGRITY: "the envelope verifies with the repository keyring",
    PATH: "the path matches the report",
    REQUIRED: "every required test present",
    SKIPS: "skip policy",
    GRADE: "grade recomputed from the records",
    REPLAY: "no replay of the signed payload",
    POLICY: "acceptance policy",
    KEY: "signing key valid for the vendor when the submission entered the repository",
    GOLDEN: "golden artifacts: signed manifest, intact files, a seeded sample re-run",
    DERIVED: f"the report files derived from {REPORT_JSON} are what it renders, byte for byte",
}
_SKIP_KINDS = (NEVER_SKIP, EXPIRED_SKIP, SKIP_TOO_LONG)
_LINK = re.compile(r"https?://\S+")


def passed(number: int, why: str = "") -> CheckResult:
    return CheckResult(number, TITLES[number], True, why)


def failed(number: int, problems: Sequence[str]) -> CheckResult:
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return CheckResult(number, TITLES[number], False, f"{problems[0]}{more}")


def judged(number: int, problems: Sequence[str], note: str = "") -> CheckResult:
    return failed(number, problems) if problems else passed(number, note)


def not_checked(number: int) -> CheckResult:
    return CheckResult(number, TITLES[number], False, "not checked: the envelope did not verify",
                       skipped=True)


@dataclass(frozen=True)
class VerifiedSubmission:
    """A submission whose envelope verified: its report, standard and payload digest."""

    verified: VerifiedReport
    standard: Standard
    digest: str
    #: Each signed file's bytes, as the verifier hashed them.
    subjects: Mapping[str, bytes]

    @property
    def report(self) -> Report:
        return self.verified.content


# 1. layout and names


def _entry_problem(child: Path, known: tuple[str, ...]) -> str | None:
    name = printable(child.name)
    try:
        status = child.lstat()
    except OSError as exc:
        return f"{name} cannot be read: {exc.strerror}"
    if stat.S_ISLNK(status.st_mode):
        return f"{name} is a symlink"
    if stat.S_ISDIR(status.st_mode):
        if child.name == GOLDEN_DIR:
            return None  # its files are check 10's: each listed by the signed manifest
        return f"{name} is a directory (a submission holds plain files only)"
    if not stat.S_ISREG(status.st_mode):
        return f"{name} is not a regular file"
    if child.name not in known:
        return f"unknown file {name}"
    if status.st_size > MAX_FILE_BYTES:
        return f"{name} is {status.st_size} bytes, over the limit of {MAX_FILE_BYTES}"
    return None


def check_layout(directory: Path) -> CheckResult:
    try:
        children = sorted(directory.iterdir())
    except OSError as exc:
        return failed(LAYOUT, [f"cannot list the directory: {exc.strerror}"])
    present = {child.name for child in children}
    known = known_files_of(present)
    problems = [p for p in (_entry_problem(child, known) for child in children) if p is not None]
    problems += [f"required file {n} is missing" for n in required_files_of(present)
                 if n not in present]
    if GOLDEN_DIR in present and GOLDEN_MANIFEST not in present:
        problems.append(f"{GOLDEN_DIR}/ without {GOLDEN_MANIFEST} listing its files")
    return judged(LAYOUT, problems)


# 2. integrity: the verifier's own steps, all but the grade


def verify_integrity(
    directory: Path, keyring_dir: Path, released_kits: Sequence[ReleasedKit], now: dt.datetime
) -> VerifiedSubmission:
    """The verifier's steps 1-11 on ``directory``; ``VerificationError("step N: ...")`` if not."""
    checked = verify_before_grade(
        RunDir(directory).envelope, keyring_dir, directory, now=now, released_kits=released_kits
    )
    return VerifiedSubmission(checked.verified, checked.standard, sha256_bytes(checked.payload),
                              checked.subjects)


# 3. the path matches the report


def check_path(key: SubmissionKey, verified: VerifiedReport, digest: str) -> CheckResult:
    report = verified.content
    try:
        expected = submission_key_for(report, digest)
    except LayoutError as exc:
        return failed(PATH, [str(exc)])
    problems = []
    if key.vendor != verified.vendor:
        problems.append(
            f"vendor segment {key.vendor}, but the report and its signing key are vendor "
            f"{verified.vendor}"
        )
    if key.torch_release != expected.torch_release:
        problems.append(
            f"torch release segment {key.torch_release}, but standard {report.standard.version} "
            f"certifies torch {expected.torch_release}"
        )
    if key.kit_version != expected.kit_version:
        problems.append(
            f"kit version segment {key.kit_version}, but the report was judged by kit "
            f"{expected.kit_version}"
        )
    if key.run_id != expected.run_id:
        problems.append(
            f"run id {key.run_id}, but the run's finish time and payload digest give "
            f"{expected.run_id}"
        )
    return judged(PATH, [printable(p) for p in problems])


# 4. every required test present


def check_required(report: Report, standard: Standard) -> CheckResult:
    recorded = {record.id for record in report.records}
    unlisted = set(missing_ids(standard, report.run.scope(), recorded))
    absent = sorted(set(report.missing) | unlisted)
    if absent:
        lie = f"; {len(unlisted)} not even listed as missing" if unlisted else ""
        return failed(REQUIRED, [
            f"{len(absent)} required test(s) of standard {standard.version} have no record "
            f"(first: {printable(absent[0])}){lie}"
        ])
    narrowed = "" if report.run.complete else "narrowed run: the tests its --tier/--select chose"
    return passed(REQUIRED, narrowed)


# 5. skip policy


def _entry_problems(report: Report) -> list[str]:
    problems = []
    for entry in report.skips.entries:
        named = printable(entry.test)
        if not entry.reason.strip():
            problems.append(f"skip manifest entry {named!r} gives no reason")
        if not _LINK.fullmatch(entry.tracking):
            problems.append(
                f"skip manifest entry {named!r} has no tracking link "
                f"(tracking {printable(entry.tracking)!r})"
            )
    return problems


def check_skips(report: Report, standard: Standard) -> CheckResult:
    try:
        violations = recomputed_violations(report, standard)
    except KitError as exc:
        return failed(SKIPS, [f"cannot apply the skip policy: {exc}"])
    problems = [printable(v["message"]) for v in violations if v.get("kind") in _SKIP_KINDS]
    return judged(SKIPS, problems + _entry_problems(report))


# 6. grade recomputed


def check_grade(report: Report, standard: Standard) -> CheckResult:
    try:
        step12_check_grade(report, standard)
    except VerificationError as exc:
        return failed(GRADE, [printable(str(exc))])
    return passed(GRADE)


# 11. the derived files


def check_derived(subjects: Mapping[str, bytes], report: Mapping[str, Any]) -> CheckResult:
    """The verifier's step 13, as its own check (``report``: the verified report's document)."""
    try:
        step13_check_derived_files(subjects, report)
    except VerificationError as exc:
        return failed(DERIVED, [printable(str(exc))])
    return passed(DERIVED)


# 7. no replay


@dataclass(frozen=True)
class PayloadIndex:
    """Every submission's signed payload sha256, and the submissions filed under each digest.

    Built once per audit, so that one submission's replay check costs the same whatever the
    repository holds: one payload filed under 10,000 run ids audits in linear time.
    """

    #: ``None``: the envelope is unreadable.
    digests: Mapping[SubmissionKey, str | None]
    #: Per digest, the submissions filing that payload, sorted.
    holders: Mapping[str, tuple[SubmissionKey, ...]]
    #: Per digest held more than once, the copy audited in full: the one filed under the run
    #: id its digest names, else the first. The others are refused by the replay check alone
    #: (their content is the audited one's).
    audited: Mapping[str, SubmissionKey]

    @classmethod
    def of(cls, digests: Mapping[SubmissionKey, str | None]) -> PayloadIndex:
        grouped: dict[str, list[SubmissionKey]] = {}
        for key, digest in digests.items():
            if digest is not None:
                grouped.setdefault(digest, []).append(key)
        holders = {digest: tuple(sorted(keys)) for digest, keys in grouped.items()}
        audited = {digest: _audited_copy(digest, keys)
                   for digest, keys in holders.items() if len(keys) > 1}
        return cls(digests, holders, audited)

    def others(self, key: SubmissionKey) -> tuple[SubmissionKey | None, int]:
        """The first other submission filing ``key``'s payload (None: none), and how many."""
        digest = self.digests.get(key)
        copies = self.holders.get(digest, ()) if digest else ()
        if len(copies) < 2:
            return None, 0
        return (copies[1] if copies[0] == key else copies[0]), len(copies) - 1

    def audited_as(self, key: SubmissionKey) -> SubmissionKey | None:
        """The copy of ``key``'s payload audited in full in its stead; None for ``key`` itself."""
        digest = self.digests.get(key)
        chosen = self.audited.get(digest) if digest else None
        return None if chosen == key else chosen


def _audited_copy(digest: str, copies: Sequence[SubmissionKey]) -> SubmissionKey:
    own = (k for k in copies if k.run_id.endswith(f"-{digest[:12]}"))
    return next(own, copies[0])


def check_replay(key: SubmissionKey, index: PayloadIndex) -> CheckResult:
    """One line however many copies: the first other path, and how many more."""
    if index.digests.get(key) is None:
        return CheckResult(REPLAY, TITLES[REPLAY], False, "not checked: the envelope is unreadable",
                           skipped=True)
    first, count = index.others(key)
    if first is None:
        return passed(REPLAY)
    more = f" and {count - 1} other path(s)" if count > 1 else ""
    return failed(REPLAY, [f"the same signed payload is also submitted as {first}{more}"])


def not_audited_copy(number: int, audited: SubmissionKey) -> CheckResult:
    return CheckResult(number, TITLES[number], False,
                       f"not checked: a copy of the signed payload audited as {audited}",
                       skipped=True)


def payload_digest(directory: Path) -> str | None:
    try:
        return sha256_bytes(step1_read_envelope(RunDir(directory).envelope).payload)
    except VerificationError:
        return None
