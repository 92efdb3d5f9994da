"""Where a submission directory sits: its repository and its key, read from its path.

``ckit verify SUBMISSION_DIR --repo-config DIR`` audits the one submission as ``ckit audit``
does, so it needs the repository the directory is filed in (its keyring, its history, the
other submissions a replay is sought in) and the key its path gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kit.repository.layout import SEGMENTS, SUBMISSIONS_DIR, LayoutError, SubmissionKey
from kit.rundir import ENVELOPE_NAME


@dataclass(frozen=True)
class FiledSubmission:
    repo_root: Path
    key: SubmissionKey


def filed_submission(path: Path) -> FiledSubmission | None:
    """``path`` (a submission directory or its envelope) as filed in a repository, or None
    when it is not under ``submissions/<release>/<vendor>/<kit>/<run-id>/``."""
    directory = path.parent if path.name == ENVELOPE_NAME else path
    if not directory.is_dir():
        return None
    parts = directory.resolve().parts
    depth = len(SEGMENTS)
    if len(parts) < depth + 2 or parts[-depth - 1] != SUBMISSIONS_DIR:
        return None
    try:
        key = SubmissionKey(*parts[-depth:])
    except LayoutError:
        return None
    return FiledSubmission(Path(*parts[:-depth - 1]), key)
