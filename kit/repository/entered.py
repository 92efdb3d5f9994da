"""When a submission entered the repository: the time keys are judged at (audit check 9).

A report's ``run.finished_at`` is written by its signer, so a retired key could sign today a
report dated before its retirement. The repository's history is not the signer's: a submission
entered the repository with the commit that added it on HEAD's first-parent line (a merge
commit when a maintainer merged it), and a submission not yet committed (a pull request's
checkout is committed; ``ckit submit``'s pre-check is not) enters now. The time judged is never
before the signed finish: a run cannot be signed before it ended.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from kit.errors import InputError
from kit.repository import git
from kit.repository.layout import SubmissionKey


def committed_at(repo_root: Path, key: SubmissionKey) -> dt.datetime | None:
    """The committer time of the first commit on HEAD's first-parent line that added a file of
    the submission; None outside a checkout or before any commit added it."""
    if not git.is_checkout(repo_root):
        return None
    try:
        dates = git.output(["log", "--first-parent", "--diff-filter=A", "--format=%cI", "HEAD",
                            "--", key.relative_path.as_posix()], repo_root).split()
    except InputError:
        return None  # no commit at all yet
    return dt.datetime.fromisoformat(dates[-1]) if dates else None


def entered_at(repo_root: Path, key: SubmissionKey, finished_at: dt.datetime,
               now: dt.datetime) -> dt.datetime:
    """When ``key`` entered the repository (now, if it has not yet), bounded below by the
    run's signed ``finished_at``."""
    entered = committed_at(repo_root, key) or now
    return max(entered, finished_at)
