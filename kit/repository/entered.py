"""When a submission entered the repository: the time keys are judged at (audit check 9).

A report's ``run.finished_at`` is written by its signer, so a retired key could sign today a
report dated before its retirement. The repository's history is not the signer's: a submission
entered the repository with the commit that added it on HEAD's first-parent line (a merge
commit when a maintainer merged it), and a submission not yet committed (``ckit submit``'s
pre-check) enters now. The time judged is never before the signed finish: a run cannot be
signed before it ended.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from kit.errors import InputError
from kit.repository import git
from kit.repository.layout import SEGMENTS, SUBMISSIONS_DIR, LayoutError, SubmissionKey

_COMMIT_MARK = "@"


def committed_times(repo_root: Path) -> dict[SubmissionKey, dt.datetime]:
    """Each committed submission's entry: the committer time of the first commit on HEAD's
    first-parent line that added a file of it. One pass over the history for every
    submission; empty outside a checkout or before any commit."""
    if not git.is_checkout(repo_root):
        return {}
    try:
        text = git.output(["log", "--first-parent", "--diff-filter=A", "--name-only",
                           f"--format={_COMMIT_MARK}%cI", "HEAD", "--", SUBMISSIONS_DIR],
                          repo_root)
    except InputError:
        return {}  # no commit at all yet
    times: dict[SubmissionKey, dt.datetime] = {}
    when: dt.datetime | None = None
    for line in text.splitlines():
        if line.startswith(_COMMIT_MARK):
            when = dt.datetime.fromisoformat(line[len(_COMMIT_MARK):])
        elif when is not None and (key := _key_of(line)) is not None:
            times[key] = when  # newest first: the oldest commit is the last one written
    return times


def _key_of(line: str) -> SubmissionKey | None:
    parts = PurePosixPath(line).parts
    if len(parts) <= len(SEGMENTS) or parts[0] != SUBMISSIONS_DIR:
        return None
    try:
        return SubmissionKey(*parts[1:len(SEGMENTS) + 1])
    except LayoutError:
        return None  # quoted or odd: not a submission path (the tree check names it)


def entered_at(times: Mapping[SubmissionKey, dt.datetime], key: SubmissionKey,
               finished_at: dt.datetime, now: dt.datetime) -> dt.datetime:
    """When ``key`` entered the repository (now, if it has not yet), bounded below by the
    run's signed ``finished_at``."""
    return max(times.get(key, now), finished_at)
