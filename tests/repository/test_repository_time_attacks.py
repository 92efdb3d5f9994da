"""Repository time a submitter cannot set (audit check 9): a vendor holding a key the
maintainers retired re-signs a report dated before the retirement and commits it with a
backdated committer date (``GIT_COMMITTER_DATE``), then a maintainer merges it by each of the
four flows. Whatever the flow, the audit of main (as the gate and portal read it) and the pull
request's own audit refuse it.

Real git clones of the shared origin: the maintainers' main retires cpu's key first.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from repository_helpers import (
    TEST_AUTHOR,
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

BRANCH = "submit/cpu/backdated"


@dataclass(frozen=True)
class Backdated:
    clone: Path
    key: SubmissionKey
    keyid: str
    #: main before the vendor's branch: the pull request's base.
    base: str


def _backdated_branch(shared: SharedRepo, tmp_path: Path) -> Backdated:
    """main retires cpu's key (10 minutes ago); the vendor branches off it, files a run signed
    after the retirement but dated 20 minutes ago, and commits it dated 20 minutes ago: before
    the retirement, and before the commit it is built on."""
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    clone = tmp_path / "clone"
    git(["clone", "--quiet", str(shared.origin), str(clone)], tmp_path)
    keyid = retire_cpu_key(shared, clone, now - dt.timedelta(minutes=10))
    base = git(["rev-parse", "HEAD"], clone).strip()
    git(["checkout", "--quiet", "-b", BRANCH], clone)
    backdated = now - dt.timedelta(minutes=20)
    key = file_submission(signed_run(shared, tmp_path, backdated), clone)
    commit_all(clone, "Submit cpu", at=backdated)
    git(["checkout", "--quiet", "main"], clone)
    return Backdated(clone, key, keyid, base)


def _maintainer(args: list[str], clone: Path) -> None:
    """A maintainer's git command, committing now (their own clock)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_COMMITTER_DATE")}
    subprocess.run(["git", *TEST_AUTHOR, *args], cwd=clone, env=env, check=True,
                   capture_output=True)


def _fast_forward(clone: Path) -> None:
    _maintainer(["merge", "--quiet", "--ff-only", BRANCH], clone)


def _squash(clone: Path) -> None:
    _maintainer(["merge", "--quiet", "--squash", BRANCH], clone)
    _maintainer(["commit", "--quiet", "-m", "Submit cpu (squashed)"], clone)


def _rebase(clone: Path) -> None:
    # GitHub's "rebase and merge" always writes new commits: --force-rebase, here.
    _maintainer(["rebase", "--quiet", "--force-rebase", "main", BRANCH], clone)
    _maintainer(["checkout", "--quiet", "main"], clone)
    _maintainer(["merge", "--quiet", "--ff-only", BRANCH], clone)


def _merge_commit(clone: Path) -> None:
    _maintainer(["merge", "--quiet", "--no-ff", "-m", "Merge the cpu submission", BRANCH], clone)


def _key_check(shared: SharedRepo, clone: Path, key: SubmissionKey, *extra: str,
               capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    main(["audit", str(clone), *extra, *shared.audit_args, "--json"])
    submissions = json.loads(capsys.readouterr().out)["submissions"]
    (submission,) = [s for s in submissions if s["submission"] == str(key)]
    return next(c for c in submission["checks"] if c["number"] == KEY)


def _refused_after_merge(shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                         merge: Callable[[Path], None]) -> None:
    backdated = _backdated_branch(shared, tmp_path)
    merge(backdated.clone)
    check = _key_check(shared, backdated.clone, backdated.key, capsys=capsys)
    assert not check["passed"], check
    assert f"after key {backdated.keyid[:16]} of vendor cpu was retired" in str(check["why"])


def test_backdated_commit_merged_by_fast_forward_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's own flow: ``git merge --ff-only`` keeps the vendor's commit and its date;
    a date earlier than its parent's (the retirement's commit) is not believed."""
    _refused_after_merge(shared, tmp_path, capsys, _fast_forward)


def test_backdated_commit_merged_by_squash_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _refused_after_merge(shared, tmp_path, capsys, _squash)


def test_backdated_commit_merged_by_rebase_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _refused_after_merge(shared, tmp_path, capsys, _rebase)


def test_backdated_commit_merged_by_merge_commit_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _refused_after_merge(shared, tmp_path, capsys, _merge_commit)


def test_backdated_commit_in_a_pull_request_is_judged_at_the_audits_time(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before any merge, the bot's audit of the pull request judges its submission now."""
    backdated = _backdated_branch(shared, tmp_path)
    git(["checkout", "--quiet", BRANCH], backdated.clone)
    check = _key_check(shared, backdated.clone, backdated.key, "--changed-since",
                       backdated.base, capsys=capsys)
    assert not check["passed"], check
    assert f"after key {backdated.keyid[:16]} of vendor cpu was retired" in str(check["why"])
