"""Audit check 9 judges a signing key at the time the submission entered the repository (the
commit that added it), never before the signed finish: the finish time is the signer's word.

Real git clones of the shared repository's origin; the retired key's holder signs validly.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

import pytest
from repository_helpers import (
    SharedRepo,
    commit_all,
    file_submission,
    git,
    retire_cpu_key,
    signed_run,
)

from kit.cli import main
from kit.repository.layout import SubmissionKey
from kit.repository.submission_checks import KEY


def _clone(shared: SharedRepo, tmp_path: Path) -> tuple[Path, str]:
    clone = tmp_path / "clone"
    git(["clone", "--quiet", str(shared.origin), str(clone)], tmp_path)
    return clone, git(["rev-parse", "HEAD"], clone).strip()


def _key_check(shared: SharedRepo, clone: Path, since: str | None, key: SubmissionKey,
               capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    """Check 9 of ``key``: in a pull request's audit (``since``, its base) or, with None, in
    the audit of the repository's history (as the gate and the portal read it)."""
    capsys.readouterr()  # what signing the keyring printed
    changed = ["--changed-since", since] if since is not None else []
    main(["audit", str(clone), *changed, *shared.audit_args, "--json"])
    submissions = json.loads(capsys.readouterr().out)["submissions"]
    (submission,) = [s for s in submissions if s["submission"] == str(key)]
    return next(c for c in submission["checks"] if c["number"] == KEY)


def test_retired_key_backdating_finished_at_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    clone, before = _clone(shared, tmp_path)
    keyid = retire_cpu_key(shared, clone, now - dt.timedelta(minutes=10))
    # Signed after the retirement, dated before it.
    run_dir = signed_run(shared, tmp_path, now - dt.timedelta(minutes=20))
    key = file_submission(run_dir, clone)
    commit_all(clone, "Submit cpu")
    check = _key_check(shared, clone, before, key, capsys)
    assert not check["passed"]
    assert f"after key {keyid[:16]} of vendor cpu was retired" in str(check["why"])


def test_submission_committed_before_its_key_retired_still_passes(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    clone, _ = _clone(shared, tmp_path)
    run_dir = signed_run(shared, tmp_path, now - dt.timedelta(minutes=20))
    key = file_submission(run_dir, clone)
    # Committed now: a date before its parent's (main's, made minutes ago) is not believed.
    commit_all(clone, "Submit cpu")
    time.sleep(2)
    retire_cpu_key(shared, clone, dt.datetime.now(dt.UTC).replace(microsecond=0))
    time.sleep(1)  # the retirement in the past when the audit judges
    # On main since before the retirement: the history's time, not the audit's now.
    check = _key_check(shared, clone, None, key, capsys)
    assert check["passed"], check
    assert str(check["why"]).startswith("1 key(s) active for cpu when it entered the repository")
