"""``ckit audit``: what the shared repository's CI runs on every submission.

Per submission, a numbered checklist; each check runs even after an earlier one failed, except
those that need a verified report (they say "not checked"):

1. layout and names: only known files, all regular (no symlink), each within ``MAX_FILE_BYTES``,
   the required ones present
2. the envelope verifies: the verifier's steps 1-11 with the repository keyring (who signed
   what; the report readable, its kit and times consistent)
3. the path matches the report: vendor (report and signer), torch release (the standard's), kit
   version, run id (finish time and payload digest)
4. every required test the run selects has a record
5. skip policy: no never-skip test skipped, no expired or over-long entry, each entry with a
   reason and a tracking link
6. the grade recomputed from the records is the grade claimed (the verifier's step 12)
7. no replay: the signed payload is filed under no other submission path of the repository
8. the acceptance policy (a seam: ``policy``)
9. the signing key was valid for the vendor when it signed (a seam: ``key_check``)

Checks 2 and 6 together are the whole of ``ckit verify``; they are apart here so that a report
signed validly by its vendor but wrong in content fails on the content check that catches it.
Repository checks: the keyring loads, and everything under ``submissions/`` is a submission.
"""

from __future__ import annotations

import datetime as dt
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kit.errors import InputError, KitError, VerificationError
from kit.hashing import sha256_bytes
from kit.printable import printable
from kit.report.build import missing_ids
from kit.report.model import Report
from kit.report.policy import EXPIRED_SKIP, NEVER_SKIP, SKIP_TOO_LONG
from kit.report.regrade import recomputed_violations
from kit.report.released import ReleasedKit, load_released_kits
from kit.repository import git
from kit.repository.interface import CheckResult, RepositoryAudit, SubmissionAudit
from kit.repository.layout import (
    KEYRING_DIR,
    MAX_FILE_BYTES,
    OPTIONAL_FILES,
    REQUIRED_FILES,
    SEGMENTS,
    SUBMISSIONS_DIR,
    LayoutError,
    SubmissionKey,
    is_valid_segment,
    submission_key_for,
)
from kit.signing.keyring import load_keyring
from kit.signing.sign import ENVELOPE_NAME
from kit.signing.verify import (
    VerifiedReport,
    step1_read_envelope,
    step2_check_payload_type,
    step3_require_signatures,
    step4_verify_signatures,
    step5_parse_statement,
    step6_check_vendor_binding,
    step7_check_subject_files,
    step8_check_report_matches,
    step9_read_report,
    step10_check_kit,
    step11_check_times,
    step12_check_grade,
)
from kit.standard import Standard

#: The acceptance policy's seam: extra checks (numbered 8) on a verified submission.
Policy = Callable[[SubmissionKey, VerifiedReport], tuple[CheckResult, ...]]
#: The seam for root-signed keyrings: was the signing key the vendor's when it signed (check 9)?
KeyCheck = Callable[[SubmissionKey, VerifiedReport], CheckResult]

LAYOUT, INTEGRITY, PATH, REQUIRED, SKIPS, GRADE, REPLAY, POLICY, KEY = range(1, 10)
TITLES = {
    LAYOUT: "layout and names",
    INTEGRITY: "the envelope verifies with the repository keyring",
    PATH: "the path matches the report",
    REQUIRED: "every required test present",
    SKIPS: "skip policy",
    GRADE: "grade recomputed from the records",
    REPLAY: "no replay of the signed payload",
    POLICY: "acceptance policy",
    KEY: "signing key valid for the vendor at signing time",
}
KEYRING_CHECK, TREE_CHECK = 1, 2
REPOSITORY_TITLES = {
    KEYRING_CHECK: "the repository keyring loads",
    TREE_CHECK: f"{SUBMISSIONS_DIR}/ holds only submission directories",
}
_SKIP_KINDS = (NEVER_SKIP, EXPIRED_SKIP, SKIP_TOO_LONG)
_LINK = re.compile(r"https?://\S+")


def _passed(number: int, why: str = "") -> CheckResult:
    return CheckResult(number, TITLES[number], True, why)


def _failed(number: int, problems: Sequence[str]) -> CheckResult:
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return CheckResult(number, TITLES[number], False, f"{problems[0]}{more}")


def _judged(number: int, problems: Sequence[str], note: str = "") -> CheckResult:
    return _failed(number, problems) if problems else _passed(number, note)


def _not_checked(number: int) -> CheckResult:
    return CheckResult(number, TITLES[number], False, "not checked: the envelope did not verify")


@dataclass(frozen=True)
class _Context:
    repo_root: Path
    released_kits: Sequence[ReleasedKit]
    now: dt.datetime
    #: Every submission's payload sha256 (``None``: unreadable envelope), for replays.
    digests: Mapping[SubmissionKey, str | None]
    policy: Policy | None
    key_check: KeyCheck | None


@dataclass(frozen=True)
class _Verified:
    verified: VerifiedReport
    standard: Standard
    digest: str

    @property
    def report(self) -> Report:
        return self.verified.content


# 1. layout and names


def _entry_problem(child: Path) -> str | None:
    name = printable(child.name)
    try:
        status = child.lstat()
    except OSError as exc:
        return f"{name} cannot be read: {exc.strerror}"
    if stat.S_ISLNK(status.st_mode):
        return f"{name} is a symlink"
    if stat.S_ISDIR(status.st_mode):
        return f"{name} is a directory (a submission holds plain files only)"
    if not stat.S_ISREG(status.st_mode):
        return f"{name} is not a regular file"
    if child.name not in (*REQUIRED_FILES, *OPTIONAL_FILES):
        return f"unknown file {name}"
    if status.st_size > MAX_FILE_BYTES:
        return f"{name} is {status.st_size} bytes, over the limit of {MAX_FILE_BYTES}"
    return None


def check_layout(directory: Path) -> CheckResult:
    try:
        children = sorted(directory.iterdir())
    except OSError as exc:
        return _failed(LAYOUT, [f"cannot list the directory: {exc.strerror}"])
    problems = [p for p in map(_entry_problem, children) if p is not None]
    present = {child.name for child in children}
    problems += [f"required file {n} is missing" for n in REQUIRED_FILES if n not in present]
    return _judged(LAYOUT, problems)


# 2. integrity: the verifier's own steps, all but the grade


def _verify(directory: Path, context: _Context) -> _Verified:
    envelope = step1_read_envelope(directory / ENVELOPE_NAME)
    step2_check_payload_type(envelope)
    step3_require_signatures(envelope)
    signers = step4_verify_signatures(envelope, context.repo_root / KEYRING_DIR)
    statement = step5_parse_statement(envelope.payload)
    step6_check_vendor_binding(statement, signers)
    report_bytes = step7_check_subject_files(statement, directory)
    step8_check_report_matches(report_bytes, statement)
    report, standard = step9_read_report(statement)
    standing = step10_check_kit(report, context.released_kits)
    step11_check_times(report, context.now)
    verified = VerifiedReport(
        vendor=statement.vendor_id,
        keyid=signers[0].keyid,
        report=statement.report,
        subjects=statement.subjects,
        kit_version=statement.kit_version,
        keyids=tuple(signer.keyid for signer in signers),
        content=report,
        kit=standing,
    )
    return _Verified(verified, standard, sha256_bytes(envelope.payload))


# 3. the path matches the report


def check_path(key: SubmissionKey, verified: VerifiedReport, digest: str) -> CheckResult:
    report = verified.content
    try:
        expected = submission_key_for(report, digest)
    except LayoutError as exc:
        return _failed(PATH, [str(exc)])
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
    return _judged(PATH, [printable(p) for p in problems])


# 4. every required test present


def check_required(report: Report, standard: Standard) -> CheckResult:
    recorded = {record.id for record in report.records}
    unlisted = set(missing_ids(standard, report.document["run"], recorded))
    absent = sorted(set(report.missing) | unlisted)
    if absent:
        lie = f"; {len(unlisted)} not even listed as missing" if unlisted else ""
        return _failed(REQUIRED, [
            f"{len(absent)} required test(s) of standard {standard.version} have no record "
            f"(first: {printable(absent[0])}){lie}"
        ])
    narrowed = "" if report.run.complete else "within the run's --tier/--select"
    return _passed(REQUIRED, narrowed)


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
        return _failed(SKIPS, [f"cannot apply the skip policy: {exc}"])
    problems = [printable(v["message"]) for v in violations if v.get("kind") in _SKIP_KINDS]
    return _judged(SKIPS, problems + _entry_problems(report))


# 6. grade recomputed


def check_grade(report: Report, standard: Standard) -> CheckResult:
    try:
        step12_check_grade(report, standard)
    except VerificationError as exc:
        return _failed(GRADE, [printable(str(exc))])
    return _passed(GRADE)


# 7. no replay


def check_replay(key: SubmissionKey, digests: Mapping[SubmissionKey, str | None]) -> CheckResult:
    mine = digests.get(key)
    if mine is None:
        return CheckResult(REPLAY, TITLES[REPLAY], False, "not checked: the envelope is unreadable")
    others = [str(other) for other, digest in sorted(digests.items())
              if digest == mine and other != key]
    problems = [f"the same signed payload is also submitted as {other}" for other in others]
    return _judged(REPLAY, problems)


# 8 and 9: seams


def _seam_checks(key: SubmissionKey, found: _Verified | None, context: _Context
                 ) -> tuple[CheckResult, ...]:
    if found is None:
        return _not_checked(POLICY), _not_checked(KEY)
    if context.policy is not None:
        policy = context.policy(key, found.verified)
    else:
        policy = (_passed(POLICY, "no acceptance policy given"),)
    if context.key_check is not None:
        key_result = context.key_check(key, found.verified)
    else:
        key_result = _passed(KEY, "keyring membership only (check 2): no root-signed keyring given")
    return (*policy, key_result)


def _audit_submission(key: SubmissionKey, context: _Context) -> SubmissionAudit:
    directory = key.directory(context.repo_root)
    checks = [check_layout(directory)]
    found: _Verified | None = None
    try:
        found = _verify(directory, context)
        checks.append(_passed(INTEGRITY, printable("; ".join(found.verified.notes))))
    except VerificationError as exc:
        checks.append(_failed(INTEGRITY, [printable(str(exc))]))
    if found is None:
        checks += [_not_checked(n) for n in (PATH, REQUIRED, SKIPS, GRADE)]
    else:
        checks += [
            check_path(key, found.verified, found.digest),
            check_required(found.report, found.standard),
            check_skips(found.report, found.standard),
            check_grade(found.report, found.standard),
        ]
    checks.append(check_replay(key, context.digests))
    checks += _seam_checks(key, found, context)
    return SubmissionAudit(
        key, tuple(checks), report=found.report if found else None,
        payload_digest=context.digests.get(key),
    )


# The repository as a whole


@dataclass(frozen=True)
class SubmissionTree:
    """What is under ``submissions/``: the submission directories, and whatever else is."""

    keys: tuple[SubmissionKey, ...]
    #: One line per entry that is not part of a submission's path.
    problems: tuple[str, ...]


_SEGMENT_WORDS = {"torch_release": "torch release", "vendor": "vendor id",
                  "kit_version": "kit version", "run_id": "run id"}


def _child_problem(child: Path, relative: PurePosixPath, segment: str) -> str | None:
    named = printable(relative.as_posix())
    if child.is_symlink():
        return f"{named} is a symlink"
    if not child.is_dir():
        return f"{named} is a file where a {_SEGMENT_WORDS[segment]} directory belongs"
    if not is_valid_segment(segment, child.name):
        return f"{named}: not a valid {_SEGMENT_WORDS[segment]} (a traversal or odd characters?)"
    return None


def _walk(directory: Path, relative: PurePosixPath, depth: int,
          keys: list[SubmissionKey], problems: list[str]) -> None:
    try:
        children = sorted(directory.iterdir())
    except OSError as exc:
        problems.append(f"{printable(relative.as_posix())} cannot be listed: {exc.strerror}")
        return
    if not children:
        problems.append(f"{printable(relative.as_posix())} is an empty directory (too shallow)")
    for child in children:
        path = relative / child.name
        problem = _child_problem(child, path, SEGMENTS[depth])
        if problem is not None:
            problems.append(problem)
        elif depth == len(SEGMENTS) - 1:
            keys.append(SubmissionKey(*path.parts[1:]))
        else:
            _walk(child, path, depth + 1, keys, problems)


def scan_submissions(repo_root: Path) -> SubmissionTree:
    """Every submission directory, and one line for each thing misplaced; symlinks unfollowed."""
    top = repo_root / SUBMISSIONS_DIR
    if top.is_symlink() or (top.exists() and not top.is_dir()):
        return SubmissionTree((), (f"{SUBMISSIONS_DIR} is not a plain directory",))
    keys: list[SubmissionKey] = []
    problems: list[str] = []
    if top.is_dir():
        _walk(top, PurePosixPath(SUBMISSIONS_DIR), 0, keys, problems)
    return SubmissionTree(tuple(sorted(keys)), tuple(problems))


def _tree_checks(tree: SubmissionTree) -> tuple[CheckResult, ...]:
    title = REPOSITORY_TITLES[TREE_CHECK]
    if not tree.problems:
        return (CheckResult(TREE_CHECK, title, True),)
    return tuple(CheckResult(TREE_CHECK, title, False, problem) for problem in tree.problems)


def _first_symlink(directory: Path) -> Path | None:
    """A keyring reached through a link could hold keys from anywhere on the machine."""
    if directory.is_symlink():
        return directory
    inside = sorted(directory.rglob("*")) if directory.is_dir() else []
    return next((path for path in inside if path.is_symlink()), None)


def _keyring_check(repo_root: Path) -> CheckResult:
    directory = repo_root / KEYRING_DIR
    title = REPOSITORY_TITLES[KEYRING_CHECK]
    link = _first_symlink(directory)
    if link is not None:
        named = printable(link.relative_to(repo_root).as_posix())
        return CheckResult(KEYRING_CHECK, title, False, f"{named} is a symlink")
    try:
        keyring = load_keyring(directory)
    except InputError as exc:
        return CheckResult(KEYRING_CHECK, title, False, printable(str(exc)))
    vendors = len(keyring.vendors())
    note = f"{len(keyring.entries)} key(s) of {vendors} vendor(s)"
    return CheckResult(KEYRING_CHECK, title, True, note)


def changed_submissions(repo_root: Path, ref: str) -> frozenset[SubmissionKey]:
    """The submissions with a file changed between ``ref`` and HEAD (``git diff REF...HEAD``)."""
    git.refuse_option_like(ref, "--changed-since ref")
    names = git.output(["diff", "--name-only", "-z", "--relative", f"{ref}...HEAD", "--"],
                       repo_root)
    keys = set()
    for name in filter(None, names.split("\0")):
        parts = PurePosixPath(name).parts
        if len(parts) > len(SEGMENTS) and parts[0] == SUBMISSIONS_DIR:
            try:
                keys.add(SubmissionKey(*parts[1:len(SEGMENTS) + 1]))
            except LayoutError:
                continue  # not a submission path: the tree check names it
    return frozenset(keys)


def _payload_digest(directory: Path) -> str | None:
    try:
        return sha256_bytes(step1_read_envelope(directory / ENVELOPE_NAME).payload)
    except VerificationError:
        return None


def audit_repository(
    repo_root: Path,
    *,
    changed_since: str | None = None,
    released_kits: Sequence[ReleasedKit] | None = None,
    now: dt.datetime | None = None,
    policy: Policy | None = None,
    key_check: KeyCheck | None = None,
) -> RepositoryAudit:
    """Audit every submission of ``repo_root`` (a checkout, or a plain directory), or with
    ``changed_since`` those changed since that git ref; replays are sought in all of them."""
    if not repo_root.is_dir():
        raise InputError(f"{repo_root}: not a directory")
    tree = scan_submissions(repo_root)
    context = _Context(
        repo_root=repo_root,
        released_kits=load_released_kits() if released_kits is None else released_kits,
        now=now or dt.datetime.now(dt.UTC),
        digests={key: _payload_digest(key.directory(repo_root)) for key in tree.keys},
        policy=policy,
        key_check=key_check,
    )
    selected = tree.keys
    if changed_since is not None:
        changed = changed_submissions(repo_root, changed_since)
        selected = tuple(key for key in tree.keys if key in changed)
    return RepositoryAudit(
        checks=(_keyring_check(repo_root), *_tree_checks(tree)),
        submissions=tuple(_audit_submission(key, context) for key in selected),
    )
