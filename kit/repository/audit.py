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
   (``PayloadIndex``: submissions indexed by payload digest once, so a payload copied under
   many run ids is verified once, its copies refused in one line each: linear in copies)
8. the acceptance policy (a seam: ``policy``)
9. the signing key was valid for the vendor when the submission entered the repository (now for
   a pull request's own, else its commit's repository time, never before the signed finish;
   ``entered``; a seam: ``key_check``)
10. golden artifacts, when the submission carries them: the manifest is a signed subject, every
    file it lists is intact and nothing else is under golden/, and a sample of programs
    (``golden_sample``, seeded by the run id) re-run with the reference runtimes gives the
    stored outputs
11. junit.xml, results.csv and summary.md are byte for byte what report.json renders (the
    verifier's step 13): a summary claiming more than the report is refused

Checks 2, 6 and 11 together are the whole of ``ckit verify``; they are apart here so that a report
signed validly by its vendor but wrong in content fails on the content check that catches it.
Repository checks: (1) the keyring loads; (2) everything under ``submissions/`` is a
submission; (3) with the auditor's trust roots, the roots signed keyring.json, it lists every
key file, and it is no older (its ``version``) than any keyring.json the roots signed in the
repository's history (``keyring_history``: no rollback to before a revocation); (4) with
``--changed-since REF``, nothing under ``submissions/`` was deleted since REF: history is
append-only, so a deleted submission (or a file of one) is a failure naming its path; (5) with
``--changed-since REF``, the pull request changes nothing outside ``submissions/``, or, when it
changes no submission, it is a maintainers' pull request whose every path is listed for review
and (6) whose ``ckit/`` policy files load (``pull_request``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kit.errors import InputError, VerificationError
from kit.grading.released import ReleasedKit, load_released_kits
from kit.printable import printable
from kit.repository.body_audit import audit_body_submission
from kit.repository.golden_sample import DEFAULT_GOLDEN_SAMPLE, check_golden_sample
from kit.repository.interface import CheckResult, RepositoryAudit, SubmissionAudit
from kit.repository.keyring_history import rollback_problem
from kit.repository.layout import (
    KEYRING_DIR,
    SEGMENTS,
    SUBMISSIONS_DIR,
    LayoutError,
    SubmissionKey,
    is_valid_segment,
)
from kit.repository.pull_request import (
    POLICY_FILES_CHECK,
    POLICY_FILES_TITLE,
    SCOPE_CHECK,
    SCOPE_TITLE,
    changed_paths,
    scope_checks,
)
from kit.repository.submission_checks import (
    DERIVED,
    GOLDEN,
    GRADE,
    INTEGRITY,
    KEY,
    PATH,
    POLICY,
    REQUIRED,
    SKIPS,
    PayloadIndex,
    VerifiedSubmission,
    check_derived,
    check_grade,
    check_layout,
    check_path,
    check_replay,
    check_required,
    check_skips,
    failed,
    not_audited_copy,
    not_checked,
    passed,
    payload_digest,
    verify_integrity,
)
from kit.repository.trust_and_policy import (
    KeyValidAtSigning,
    PolicyFromFile,
    trusted_keyring_or_problem,
)
from kit.rundir import REPORT_HEAD
from kit.signing.keyring import VendorIdentity, load_keyring
from kit.signing.trust import TrustedKeyring
from kit.verification.content_cache import ContentCache
from kit.verification.verify import VerifiedReport

__all__ = ["REPOSITORY_TITLES", "KeyCheck", "Policy", "SubmissionTree", "audit_repository",
           "changed_submissions", "deleted_submission_paths", "scan_submissions"]

#: The acceptance policy's seam: extra checks (numbered 8) on a verified submission.
Policy = Callable[[SubmissionKey, VerifiedReport], tuple[CheckResult, ...]]
#: The seam for root-signed keyrings: was the signing key the vendor's when it signed (check 9)?
KeyCheck = Callable[[SubmissionKey, VerifiedReport], CheckResult]

KEYRING_CHECK, TREE_CHECK, TRUST_CHECK, DELETION_CHECK = 1, 2, 3, 4
REPOSITORY_TITLES = {
    DELETION_CHECK: f"nothing under {SUBMISSIONS_DIR}/ was deleted since the ref (history is "
                    "append-only)",
    KEYRING_CHECK: "the repository keyring loads",
    TREE_CHECK: f"{SUBMISSIONS_DIR}/ holds only submission directories",
    TRUST_CHECK: "the keyring is signed by the trust roots, lists every key file and is no "
                 "older than any signed before",
    SCOPE_CHECK: SCOPE_TITLE,
    POLICY_FILES_CHECK: POLICY_FILES_TITLE,
}


def _trust_check(problem: str | None, note: str) -> CheckResult:
    title = REPOSITORY_TITLES[TRUST_CHECK]
    return CheckResult(TRUST_CHECK, title, problem is None, printable(problem or note))


def _trusted_keyring(repo_root: Path, trust_roots: Path, refs: Sequence[str]
                     ) -> tuple[TrustedKeyring | None, CheckResult]:
    """The keyring as the roots vouch for it (None if they do not), and check 3."""
    trusted, problem = trusted_keyring_or_problem(repo_root / KEYRING_DIR, trust_roots)
    note = ""
    if trusted is not None and problem is None:
        problem, note = rollback_problem(repo_root, trusted, refs)
    return (trusted if problem is None else None), _trust_check(problem, note)


@dataclass(frozen=True)
class _Context:
    repo_root: Path
    released_kits: Sequence[ReleasedKit]
    now: dt.datetime
    #: Every submission's payload sha256, and who files each, for replays and copies.
    payloads: PayloadIndex
    policy: Policy | None
    key_check: KeyCheck | None
    #: Golden programs re-run per submission (check 10).
    golden_sample: int = DEFAULT_GOLDEN_SAMPLE
    #: The auditor's record of body content verdicts, per signed payload (None: none kept).
    content_cache: ContentCache | None = None


# 8 and 9: seams


def _seam_checks(key: SubmissionKey, verified: VerifiedReport | None, context: _Context
                 ) -> tuple[CheckResult, ...]:
    if verified is None:
        return not_checked(POLICY), not_checked(KEY)
    if context.policy is not None:
        policy = context.policy(key, verified)
    else:
        policy = (passed(POLICY, "no acceptance policy given"),)
    if context.key_check is not None:
        key_result = context.key_check(key, verified)
    else:
        key_result = passed(KEY, "keyring membership only (check 2): no root-signed keyring given")
    return (*policy, key_result)


#: What a copy of an audited payload is not audited for again: its content is the audited one's.
_COPY_UNCHECKED = (INTEGRITY, PATH, REQUIRED, SKIPS, GRADE)
_COPY_SEAMS = (POLICY, KEY, GOLDEN)


def _audit_copy(key: SubmissionKey, audited: SubmissionKey, context: _Context
                ) -> SubmissionAudit:
    """A payload filed under several paths is verified once: every copy but the audited one
    fails its replay check, and is otherwise checked for its layout alone (linear in copies)."""
    checks = [
        check_layout(key.directory(context.repo_root)),
        *(not_audited_copy(number, audited) for number in _COPY_UNCHECKED),
        check_replay(key, context.payloads),
        *(not_audited_copy(number, audited) for number in _COPY_SEAMS),
    ]
    return SubmissionAudit(key, tuple(checks), payload_digest=context.payloads.digests.get(key))


def _audit_submission(key: SubmissionKey, context: _Context) -> SubmissionAudit:
    audited = context.payloads.audited_as(key)
    if audited is not None:
        return _audit_copy(key, audited, context)
    directory = key.directory(context.repo_root)
    if (directory / REPORT_HEAD).is_file():
        return _audit_body(key, directory, context)
    checks = [check_layout(directory)]
    found: VerifiedSubmission | None = None
    try:
        found = verify_integrity(directory, context.repo_root / KEYRING_DIR,
                                 context.released_kits, context.now)
        checks.append(passed(INTEGRITY, printable("; ".join(found.verified.notes))))
    except VerificationError as exc:
        checks.append(failed(INTEGRITY, [printable(str(exc))]))
    if found is None:
        checks += [not_checked(n) for n in (PATH, REQUIRED, SKIPS, GRADE)]
    else:
        checks += [
            check_path(key, found.verified, found.digest),
            check_required(found.report, found.standard),
            check_skips(found.report, found.standard),
            check_grade(found.report, found.standard),
        ]
    checks.append(check_replay(key, context.payloads))
    checks += _seam_checks(key, found.verified if found else None, context)
    checks.append(
        not_checked(GOLDEN) if found is None
        else check_golden_sample(key, directory, found.verified, context.golden_sample)
    )
    checks.append(
        not_checked(DERIVED) if found is None
        else check_derived(found.subjects, found.verified.report)
    )
    return SubmissionAudit(
        key, tuple(checks), report=found.report if found else None,
        payload_digest=context.payloads.digests.get(key),
    )


def _audit_body(key: SubmissionKey, directory: Path, context: _Context) -> SubmissionAudit:
    """A ``body``-format submission: checks 2-6 and 11 by ``audit_body_submission`` (the body
    decoded once per signed payload), the others as for any submission."""
    audited = audit_body_submission(key, directory, context.repo_root / KEYRING_DIR,
                                    now=context.now, released_kits=context.released_kits,
                                    cache=context.content_cache)
    integrity, path, required, skips, grade, derived = audited.checks
    golden = (not_checked(GOLDEN) if audited.verified is None
              else check_golden_sample(key, directory, audited.verified, context.golden_sample))
    checks = (check_layout(directory), integrity, path, required, skips, grade,
              check_replay(key, context.payloads), *_seam_checks(key, audited.verified, context),
              golden, derived)
    return SubmissionAudit(key, checks, report=audited.report,
                           payload_digest=context.payloads.digests.get(key))


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


def _key_of(path: PurePosixPath) -> SubmissionKey | None:
    parts = path.parts
    if len(parts) > len(SEGMENTS) and parts[0] == SUBMISSIONS_DIR:
        try:
            return SubmissionKey(*parts[1:len(SEGMENTS) + 1])
        except LayoutError:
            return None  # not a submission path: the tree check names it
    return None


def changed_submissions(repo_root: Path, ref: str) -> frozenset[SubmissionKey]:
    """The submissions with a file changed between ``ref`` and HEAD (``git diff REF...HEAD``)."""
    keys = (_key_of(path) for path in changed_paths(repo_root, ref))
    return frozenset(key for key in keys if key is not None)


def deleted_submission_paths(repo_root: Path, ref: str) -> tuple[str, ...]:
    """What was deleted under ``submissions/`` since ``ref``: a whole submission directory as
    one path, else each deleted file."""
    found: dict[str, None] = {}  # ordered and unique
    for path in changed_paths(repo_root, ref, deleted=True):
        if not path.parts or path.parts[0] != SUBMISSIONS_DIR:
            continue
        key = _key_of(path)
        gone = key is not None and not key.directory(repo_root).exists()
        found[f"{key}/" if gone else path.as_posix()] = None
    return tuple(found)


def _deletion_checks(repo_root: Path, ref: str) -> tuple[CheckResult, ...]:
    title = REPOSITORY_TITLES[DELETION_CHECK]
    deleted = deleted_submission_paths(repo_root, ref)
    if not deleted:
        return (CheckResult(DELETION_CHECK, title, True, printable(f"none since {ref}")),)
    return tuple(
        CheckResult(DELETION_CHECK, title, False, printable(f"{path} was deleted since {ref}"))
        for path in deleted
    )


def audit_repository(
    repo_root: Path,
    *,
    changed_since: str | None = None,
    released_kits: Sequence[ReleasedKit] | None = None,
    now: dt.datetime | None = None,
    policy: Policy | None = None,
    key_check: KeyCheck | None = None,
    trust_roots: Path | None = None,
    policy_file: Path | None = None,
    golden_sample: int = DEFAULT_GOLDEN_SAMPLE,
    only: frozenset[SubmissionKey] | None = None,
    content_cache: ContentCache | None = None,
) -> RepositoryAudit:
    """Audit every submission of ``repo_root`` (a checkout, or a plain directory), or with
    ``changed_since`` those changed since that git ref, or with ``only`` those (``ckit submit``'s
    pre-check); replays are sought in all of them.

    ``trust_roots`` (the roots that must sign the repository's keyring.json) gives check 9 and
    ``policy_file`` (an acceptance policy) check 8, unless ``key_check``/``policy`` are given.
    ``golden_sample``: how many golden programs of each submission check 10 re-runs.
    ``content_cache``: where the content verdicts of body-format submissions are recorded and
    read back (``kit.repository.body_audit``); without it every body is checked again.
    """
    if not repo_root.is_dir():
        raise InputError(f"{repo_root}: not a directory")
    tree = scan_submissions(repo_root)
    now = now or dt.datetime.now(dt.UTC)
    released_kits = load_released_kits() if released_kits is None else released_kits
    repository_checks = [_keyring_check(repo_root)]
    identities: tuple[VendorIdentity, ...] = ()
    # A pull request's submissions are not in the repository yet: they enter now, when merged.
    changed = (changed_submissions(repo_root, changed_since) if changed_since is not None
               else frozenset())
    if trust_roots is not None and key_check is None:
        refs = ["HEAD", *([changed_since] if changed_since is not None else [])]
        trusted, trust_check = _trusted_keyring(repo_root, trust_roots, refs)
        repository_checks.append(trust_check)
        key_check = KeyValidAtSigning(trusted, trust_check.why, repo_root, now, pending=changed)
        identities = trusted.manifest.identities if trusted is not None else ()
    if policy_file is not None and policy is None:
        policy = PolicyFromFile(policy_file, released_kits, now)
    context = _Context(
        repo_root=repo_root,
        released_kits=released_kits,
        now=now,
        payloads=PayloadIndex.of(
            {key: payload_digest(key.directory(repo_root)) for key in tree.keys}
        ),
        policy=policy,
        key_check=key_check,
        golden_sample=golden_sample,
        content_cache=content_cache,
    )
    selected = tree.keys
    if changed_since is not None:
        selected = tuple(key for key in tree.keys if key in changed)
        repository_checks += _deletion_checks(repo_root, changed_since)
        repository_checks += scope_checks(repo_root, changed_since)
    if only is not None:
        selected = tuple(key for key in selected if key in only)
    return RepositoryAudit(
        checks=tuple(sorted((*repository_checks, *_tree_checks(tree)), key=lambda c: c.number)),
        submissions=tuple(_audit_submission(key, context) for key in selected),
        identities=identities,
    )
