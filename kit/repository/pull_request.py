"""What a pull request changes besides submissions: repository check 5 of ``ckit audit
--changed-since REF``.

The bot judges the whole pull request, not only the submissions in it. A submitter's pull
request may change nothing but ``submissions/``: a looser ``ckit/gate.yaml``, a root key of
its own in ``ckit/roots/``, a workflow step sending the token out would otherwise ride in on a
valid submission (the audit reads the *base* branch's ``ckit/``, but a merge makes the pull
request's copy the base). So every other changed path fails, one line each.

A pull request changing no submission is the maintainers' kind: it is audited as such. The
keyring must still be signed by the base branch's roots (repository check 3, with
``--repo-config <base>/ckit``), each policy file it changes must load (check 6), and every path it
changes is listed for the reviewers (check 5 passes, one line per path): the kit cannot tell a
good workflow from a bad one, a person must. Its last line says so (``MAINTAINERS_VERDICT``), and
the bot labels it for review, never ``audit-passed``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from kit.acceptance import load_policy
from kit.errors import KitError
from kit.grading.released import load_released_kits
from kit.printable import printable
from kit.repository import git
from kit.repository.gate import load_gate_policy
from kit.repository.interface import CheckResult
from kit.repository.layout import SUBMISSIONS_DIR
from kit.repository.repo_config import (
    ACCEPTANCE_NAME,
    CONFIG_DIR,
    GATE_NAME,
    RELEASED_KITS_NAME,
)

SCOPE_CHECK, POLICY_FILES_CHECK = 5, 6
SCOPE_TITLE = f"the pull request changes nothing outside {SUBMISSIONS_DIR}/"
MAINTAINERS_TITLE = "a maintainers' pull request (no submissions): for review"
POLICY_FILES_TITLE = f"the {CONFIG_DIR}/ policy files it changes are valid"
#: How the text audit's last line starts for a maintainers' pull request that passed: the bot
#: reads it to label the pull request for review instead of audit-passed.
MAINTAINERS_VERDICT = "REVIEW: a pull request of maintainers"

_Loader = Callable[[Path], object]
#: The files of ``ckit/`` the kit can read, each with the reader that refuses a bad one.
_POLICY_LOADERS: dict[str, _Loader] = {
    ACCEPTANCE_NAME: lambda path: load_policy(path, vendor="any"),
    GATE_NAME: load_gate_policy,
    RELEASED_KITS_NAME: load_released_kits,
}


def changed_paths(repo_root: Path, ref: str, *, deleted: bool = False) -> list[PurePosixPath]:
    """Paths changed (or only those deleted) between ``ref`` and HEAD (``git diff REF...HEAD``);
    without rename detection, so a move shows its old path as deleted and its new one added."""
    git.refuse_option_like(ref, "--changed-since ref")
    only_deleted = ["--diff-filter=D"] if deleted else []
    names = git.output(["diff", "--name-only", "--no-renames", *only_deleted, "-z", "--relative",
                        f"{ref}...HEAD", "--"], repo_root)
    return [PurePosixPath(name) for name in names.split("\0") if name]


def is_submission_path(path: PurePosixPath) -> bool:
    return len(path.parts) > 1 and path.parts[0] == SUBMISSIONS_DIR


def _outside(paths: Sequence[PurePosixPath]) -> list[str]:
    return [printable(path.as_posix()) for path in paths if not is_submission_path(path)]


def _refused(outside: Sequence[str]) -> tuple[CheckResult, ...]:
    return tuple(
        CheckResult(SCOPE_CHECK, SCOPE_TITLE, False,
                    f"changes what the repository is judged by: {path}; needs a maintainers' "
                    "pull request without submissions")
        for path in outside
    )


def _policy_problem(repo_root: Path, path: PurePosixPath) -> str | None:
    """Why the pull request's copy of a ``ckit/`` policy file does not load, or None."""
    loader = _POLICY_LOADERS.get(path.name) if path.parent == PurePosixPath(CONFIG_DIR) else None
    file = repo_root / path
    if loader is None or not file.exists():
        return None  # not a policy file, or deleted (listed for review by check 5)
    if file.is_symlink():
        return f"{printable(path.as_posix())} is a symlink"
    try:
        loader(file)
    except KitError as exc:
        return printable(f"{path.as_posix()}: {exc}")
    return None


def _policy_files_check(repo_root: Path, changed: Sequence[PurePosixPath]
                        ) -> tuple[CheckResult, ...]:
    problems = [p for p in (_policy_problem(repo_root, path) for path in changed) if p]
    if not problems:
        return (CheckResult(POLICY_FILES_CHECK, POLICY_FILES_TITLE, True),)
    return tuple(CheckResult(POLICY_FILES_CHECK, POLICY_FILES_TITLE, False, problem)
                 for problem in problems)


def _for_review(outside: Sequence[str]) -> tuple[CheckResult, ...]:
    return tuple(CheckResult(SCOPE_CHECK, MAINTAINERS_TITLE, True, f"changes {path}")
                 for path in outside)


def scope_checks(repo_root: Path, ref: str) -> tuple[CheckResult, ...]:
    """Check 5 (and 6 for a maintainers' pull request) of everything changed since ``ref``."""
    changed = changed_paths(repo_root, ref)
    outside = _outside(changed)
    if not outside:
        return (CheckResult(SCOPE_CHECK, SCOPE_TITLE, True),)
    if any(is_submission_path(path) for path in changed):
        return _refused(outside)
    return (*_for_review(outside), *_policy_files_check(repo_root, changed))


def is_maintainers_change(checks: Sequence[CheckResult]) -> bool:
    """Whether ``scope_checks`` found a maintainers' pull request (paths listed for review)."""
    return any(check.number == SCOPE_CHECK and check.title == MAINTAINERS_TITLE
               for check in checks)
