"""``ckit submit``: file a verified run in the shared repository, on a new branch of its own.

Nothing reaches the repository unless the run verifies: the files are first copied into a
staging directory beside a fresh clone, and the staged copy (the very bytes that get committed)
is verified against the repository's keyring. Then, filed in the clone but not yet committed,
it is audited with the audit's own submission checks (a ``Precheck``, the auditor's choices as
``ckit audit`` takes them): what the audit would refuse is refused here, before any commit, so
a vendor learns it at once rather than at review. One submission per branch, so one vendor and
one torch release per review.
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kit.bounded_read import FileMissing, path_within, read_regular_file
from kit.errors import InputError, VerificationError
from kit.grading.released import ReleasedKit
from kit.hashing import sha256_bytes
from kit.printable import printable
from kit.report.body import decode_head
from kit.repository import git
from kit.repository.body_audit import claimed_key
from kit.repository.interface import SubmissionAudit
from kit.repository.layout import (
    KEYRING_DIR,
    MAX_GOLDEN_BYTES,
    OPTIONAL_FILES,
    LayoutError,
    SubmissionKey,
    required_files_of,
    submission_key_for,
)
from kit.rundir import BODY_FILES, MAX_FILE_BYTES, REPORT_HEAD, RunDir
from kit.verification.verify import (
    BodyIntegrity,
    VerifiedReport,
    step1_read_envelope,
    step3_require_signatures,
    verify_body_integrity,
    verify_envelope,
)

#: The audit of one submission filed in a clone (``audit_options.precheck_from_args``).
Precheck = Callable[[Path, SubmissionKey], SubmissionAudit]


@dataclass(frozen=True)
class Submission:
    key: SubmissionKey
    branch: str
    #: The clone holding the commit: kept for the user when it was not pushed.
    clone: Path | None
    commit: str
    pushed: bool


def default_branch(key: SubmissionKey) -> str:
    return f"submit/{key.vendor}/{key.torch_release}/{key.run_id}"


def _stage(run_dir: Path, staging: Path) -> None:
    """Copy the submission's files (bounded, regular files only) out of the run directory."""
    if not run_dir.is_dir():
        raise InputError(f"{run_dir}: not a run directory")
    staging.mkdir()
    required = required_files_of({name for name in BODY_FILES if (run_dir / name).is_file()})
    for name in (*required, *OPTIONAL_FILES):
        try:
            data = read_regular_file(run_dir / name, limit=MAX_FILE_BYTES, what="run file")
        except FileMissing:
            if name in required:
                raise InputError(f"{run_dir}: {name} is missing; submit a signed run") from None
            continue
        (staging / name).write_bytes(data)
    if RunDir(staging).golden_manifest.is_file():
        _stage_golden(run_dir, staging)


def _stage_golden(run_dir: Path, staging: Path) -> None:
    """Copy the golden artifacts the (staged) manifest lists, bounded, and hash-checked.

    Only listed files travel: what the manifest does not name is nobody's signed word. The
    staged copy is then checked like check 10 of the audit, without re-running programs.
    """
    from kit.golden.manifest import load_manifest
    from kit.golden_check.check import check_golden

    manifest, _ = load_manifest(staging)
    total = 0
    for listed in sorted(manifest.listed_paths()):
        data = read_regular_file(path_within(run_dir, listed, "golden artifact"),
                                 limit=MAX_FILE_BYTES, what="golden artifact")
        total += len(data)
        if total > MAX_GOLDEN_BYTES:
            raise InputError(f"{run_dir}: golden artifacts exceed {MAX_GOLDEN_BYTES} bytes in all")
        target = staging.joinpath(*PurePosixPath(listed).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    result = check_golden(staging, sample=0)
    if not result.passed:
        raise VerificationError(f"{run_dir}: not submitted: {result.problem_lines()[0]}")


def _refuse_unsigned(staging: Path, run_dir: Path) -> None:
    """Before any clone: an unsigned run is refused whatever the keyring holds."""
    try:
        step3_require_signatures(step1_read_envelope(RunDir(staging).envelope))
    except VerificationError as exc:
        raise VerificationError(f"{run_dir}: not submitted: {exc}") from None


def _clone(repo: str, clone: Path) -> None:
    source = git.refuse_option_like(repo, "repository")
    git.git(["clone", "--quiet", "--", source, str(clone)], clone.parent)


def _keyring(clone: Path, keyring_dir: Path | None) -> Path | None:
    """The repository's own keyring when it has one; else the one given (or the kit's)."""
    own = clone / KEYRING_DIR
    return own if own.is_dir() and not own.is_symlink() else keyring_dir


def _verify(
    staging: Path, run_dir: Path, keyring_dir: Path | None,
    now: dt.datetime | None, released_kits: Sequence[ReleasedKit] | None,
) -> VerifiedReport:
    """The staged copy verified in full, whatever its format."""
    try:
        return verify_envelope(
            RunDir(staging).envelope, keyring_dir, staging, now=now, released_kits=released_kits
        )
    except VerificationError as exc:
        raise VerificationError(f"{run_dir}: not submitted: {exc}") from None


def _verify_integrity(staging: Path, run_dir: Path, keyring_dir: Path | None) -> BodyIntegrity:
    """A body's steps 1-7 alone (envelope, signatures, key standing, digests): its content is
    checked once, by the pre-check's audit, the stronger check (steps 8-12 and the audit's
    required tests and skip policy, its verdict recorded in the auditor's --content-cache)."""
    try:
        return verify_body_integrity(RunDir(staging).envelope, keyring_dir, staging)
    except VerificationError as exc:
        raise VerificationError(f"{run_dir}: not submitted: {exc}") from None


#: What submit's own verification established: the report verified in full, or a body's
#: integrity alone (its content left to the pre-check's audit).
Checked = VerifiedReport | BodyIntegrity


def _check_staged(staging: Path, run_dir: Path, keyring_dir: Path | None,
                  now: dt.datetime | None, released_kits: Sequence[ReleasedKit] | None,
                  precheck: Precheck | None) -> Checked:
    if precheck is not None and RunDir(staging).holds_body():
        return _verify_integrity(staging, run_dir, keyring_dir)
    return _verify(staging, run_dir, keyring_dir, now, released_kits)


def _key_of(checked: Checked, staging: Path, run_dir: Path) -> SubmissionKey:
    if isinstance(checked, VerifiedReport):
        return submission_key_for(checked.content, _payload_digest(staging))
    try:
        return claimed_key(checked)
    except (LayoutError, ValueError) as exc:
        raise VerificationError(f"{run_dir}: not submitted: {exc}") from None


def _grade_and_signer(checked: Checked) -> tuple[str, str]:
    """The grade and key the commit message names; a body's grade read from its head, whose
    content the pre-check's audit has passed by then."""
    if isinstance(checked, VerifiedReport):
        return checked.grade_name, checked.keyid
    head = decode_head(checked.files[REPORT_HEAD])
    return str(head["grade"]["name"]), checked.signers[0].keyid


def _payload_digest(staging: Path) -> str:
    return sha256_bytes(step1_read_envelope(RunDir(staging).envelope).payload)


def _check_branch_name(branch: str, clone: Path) -> str:
    git.refuse_option_like(branch, "branch name")
    if git.git(["check-ref-format", "--branch", branch], clone, check=False).returncode != 0:
        raise InputError(f"branch name {printable(branch)!r} is not a valid git branch name")
    return branch


def _refuse_existing_branch(branch: str, key: SubmissionKey, repo: str, clone: Path) -> None:
    """Before any commit: a push over the origin's branch would fail with git's own hint."""
    ref = f"refs/remotes/origin/{branch}"
    if git.git(["rev-parse", "--verify", "--quiet", ref], clone, check=False).returncode != 0:
        return
    if branch == default_branch(key):
        raise InputError(f"{key} is already submitted: branch {printable(branch)} of "
                         f"{printable(repo)} holds it, awaiting review; nothing to do")
    raise InputError(f"branch {printable(branch)} already exists in {printable(repo)}; pass "
                     "another --branch")


def _commit_message(key: SubmissionKey, checked: Checked) -> str:
    subject = (
        f"Submit {key.vendor} for torch {key.torch_release}, kit {key.kit_version}, "
        f"run {key.run_id}"
    )
    grade, keyid = _grade_and_signer(checked)
    return (
        f"{subject}\n\nvendor: {key.vendor}\ntorch release: {key.torch_release}\n"
        f"kit version: {key.kit_version}\nrun id: {key.run_id}\n"
        f"grade: {printable(grade)}\nsigned by: {keyid}\n"
    )


def _commit(clone: Path, key: SubmissionKey, message: str) -> str:
    author = git.configured_author(clone)
    identity: list[str] = []
    if author is None:
        name, email = git.DEFAULT_AUTHOR
        identity = ["-c", f"user.name={name}", "-c", f"user.email={email}"]
    git.git(["add", "--", key.relative_path.as_posix()], clone)
    git.git([*identity, "commit", "--quiet", "--no-verify", "-m", message], clone)
    return git.output(["rev-parse", "HEAD"], clone).strip()


def _file(staging: Path, clone: Path, key: SubmissionKey) -> None:
    target = key.directory(clone)
    if target.exists() or target.is_symlink():
        raise InputError(f"{key} already exists in the repository: this run was submitted")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(staging, target)


def _refuse_what_audit_refuses(precheck: Precheck, clone: Path, key: SubmissionKey,
                               run_dir: Path) -> None:
    failures = [check for check in precheck(clone, key).checks if not check.passed]
    if failures:
        first = failures[0]
        more = f" (and {len(failures) - 1} more failed check(s))" if len(failures) > 1 else ""
        raise VerificationError(
            f"{run_dir}: not submitted: the audit would refuse it at check {first.number} "
            f"({first.title}): {printable(first.why)}{more}"
        )


def submit_run(
    run_dir: Path,
    repo: str,
    *,
    push: bool = False,
    branch: str | None = None,
    keyring_dir: Path | None = None,
    now: dt.datetime | None = None,
    released_kits: Sequence[ReleasedKit] | None = None,
    precheck: Precheck | None = None,
) -> Submission:
    """Verify ``run_dir`` and commit it on a new branch of a fresh clone of ``repo``; with
    ``precheck``, only when the audit's checks of the filed copy pass (a body's content is then
    checked by that audit alone, not twice).

    ``repo`` is a path (a clone or a bare repository) or a URL. With ``push`` the branch goes
    to the origin and the clone is removed; without it the clone is kept and returned.
    """
    work = Path(tempfile.mkdtemp(prefix="ckit-submit-"))
    keep = False
    try:
        staging, clone = work / "staging", work / "clone"
        _stage(run_dir, staging)
        _refuse_unsigned(staging, run_dir)
        _clone(repo, clone)
        checked = _check_staged(staging, run_dir, _keyring(clone, keyring_dir), now,
                                released_kits, precheck)
        key = _key_of(checked, staging, run_dir)
        name = _check_branch_name(branch or default_branch(key), clone)
        git.git(["checkout", "--quiet", "-b", name], clone)
        _file(staging, clone, key)  # first: a merged submission is in the repository already
        if precheck is not None:
            _refuse_what_audit_refuses(precheck, clone, key, run_dir)
        _refuse_existing_branch(name, key, repo, clone)
        commit = _commit(clone, key, _commit_message(key, checked))
        if push:
            git.git(["push", "--quiet", "origin", f"HEAD:refs/heads/{name}"], clone)
        keep = not push
        shutil.rmtree(staging)
        return Submission(key, name, None if push else clone, commit, push)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
