"""When a submission entered the repository: the time keys are judged at (audit check 9).

A report's ``run.finished_at`` is written by its signer, so a retired key could sign today a
report dated before its retirement. A commit's committer date is written by its committer, so
it is no better on its own: a vendor's commit merged by fast-forward keeps the date the vendor
gave it (``GIT_COMMITTER_DATE``). The rule, from what a submitter does not control:

- a submission a pull request brings (``ckit audit --changed-since REF``: changed since the
  base) is not in the repository yet: it enters when merged, so it is judged **now**, the
  auditor's clock, whatever its commits say; so is one not yet committed (``ckit submit``'s
  pre-check);
- a committed one entered with the first commit on HEAD's first-parent line that added a file
  of it, at that commit's **repository time**: its committer date, but never earlier than the
  repository time of any of its parents. The base branch's history is the maintainers', so a
  backdated commit cannot date itself before anything it was built on, the keyring commit
  that retired a key included. A maintainer's merge commit (GitHub's merge button), squash or
  rebase is dated by the maintainer.

The time judged is never before the signed finish: a run cannot be signed before it ended.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping
from pathlib import Path, PurePosixPath

from kit.errors import InputError
from kit.repository import git
from kit.repository.layout import SEGMENTS, SUBMISSIONS_DIR, LayoutError, SubmissionKey

_COMMIT_MARK = "@"


def repository_times(repo_root: Path) -> dict[str, dt.datetime]:
    """Each commit of HEAD's history at its repository time: its committer date, raised to the
    latest repository time of its parents (a date earlier than its parent's is not believed).
    One pass, oldest first; a parent outside a shallow history sets no floor."""
    text = git.output(["log", "--reverse", "--topo-order", "--format=%H %ct %P", "HEAD"],
                      repo_root)
    times: dict[str, dt.datetime] = {}
    for line in text.splitlines():
        commit, stamp, *parents = line.split()
        own = dt.datetime.fromtimestamp(int(stamp), dt.UTC)
        times[commit] = max([own, *(times[p] for p in parents if p in times)])
    return times


def committed_times(repo_root: Path) -> dict[SubmissionKey, dt.datetime]:
    """Each committed submission's entry: the repository time of the first commit on HEAD's
    first-parent line that added a file of it. Two passes over the history for every
    submission; empty outside a checkout or before any commit."""
    if not git.is_checkout(repo_root):
        return {}
    try:
        clock = repository_times(repo_root)
        text = git.output(["log", "--first-parent", "--diff-filter=A", "--name-only",
                           f"--format={_COMMIT_MARK}%H", "HEAD", "--", SUBMISSIONS_DIR],
                          repo_root)
    except InputError:
        return {}  # no commit at all yet
    times: dict[SubmissionKey, dt.datetime] = {}
    when: dt.datetime | None = None
    for line in text.splitlines():
        if line.startswith(_COMMIT_MARK):
            when = clock.get(line[len(_COMMIT_MARK):])
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


def uncommitted(times: Mapping[SubmissionKey, dt.datetime],
                pending: Collection[SubmissionKey]) -> dict[SubmissionKey, dt.datetime]:
    """``times`` without the submissions a pull request brings: those enter now, when merged."""
    return {key: when for key, when in times.items() if key not in pending}


def entered_at(times: Mapping[SubmissionKey, dt.datetime], key: SubmissionKey,
               finished_at: dt.datetime, now: dt.datetime) -> dt.datetime:
    """When ``key`` entered the repository (now, if it has not yet), bounded below by the
    run's signed ``finished_at``."""
    return max(times.get(key, now), finished_at)
