"""``ckit submit`` for real: verified runs land on a branch of their own; anything else is refused
before the repository changes."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from repository_helpers import SharedRepo, field, git

from kit.cli import main
from kit.errors import ExitCode
from kit.repository.audit import audit_repository, changed_submissions
from kit.repository.layout import SUBMISSIONS_DIR, SubmissionKey, required_files
from kit.signing.sign import sign_output_dir, write_unsigned_envelope


def _remote_refs(origin: Path) -> str:
    return git(["for-each-ref", "--format=%(refname) %(objectname)"], origin)


def _key_of(branch: str) -> SubmissionKey:
    """The key the default branch name ``submit/<vendor>/<release>/<run-id>`` stands for."""
    _, vendor, release, run_id = branch.split("/")
    return SubmissionKey(release, vendor, "0.1.0", run_id)


def test_the_branch_holds_exactly_the_signed_files_of_one_submission(shared: SharedRepo) -> None:
    branch = shared.branches["cpu"]
    files = git(["ls-tree", "-r", "--name-only", branch], shared.origin).split()
    submitted = [name for name in files if name.startswith(f"{SUBMISSIONS_DIR}/")]
    directory = submitted[0].rsplit("/", 1)[0]
    assert sorted(submitted) == sorted(f"{directory}/{name}" for name in required_files())
    key = SubmissionKey(*directory.split("/")[1:])
    assert (key.vendor, key.torch_release) == ("cpu", "2.13")
    assert branch == f"submit/cpu/2.13/{key.run_id}"
    subject = git(["log", "-1", "--format=%s", branch], shared.origin).strip()
    assert subject == f"Submit cpu for torch 2.13, kit {key.kit_version}, run {key.run_id}"
    for name in required_files():  # plain files, byte for byte the run's
        blob = git(["show", f"{branch}:{directory}/{name}"], shared.origin)
        assert blob == (shared.runs["cpu"] / name).read_text()


def test_the_pushed_branch_checked_out_passes_the_audit(
    shared: SharedRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    audit = audit_repository(shared.checkout)
    assert audit.passed
    assert sorted(a.key.vendor for a in audit.submissions) == ["cpu", "simnpu"]
    assert all([c.number for c in a.checks] == list(range(1, 12)) for a in audit.submissions)
    assert main(["audit", str(shared.checkout), *shared.audit_args]) == ExitCode.OK
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "PASSED: 2 submission(s) audited, 0 failed; repository checks passed"
    assert "  6. ✓ grade recomputed from the records" in out
    assert ("  10. ✓ golden artifacts: signed manifest, intact files, a seeded sample re-run: "
            "no golden artifacts") in out
    assert not [line for line in out if "✗" in line]


def test_changed_since_audits_only_the_new_submission(
    shared: SharedRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    simnpu = _key_of(shared.branches["simnpu"])
    assert changed_submissions(shared.checkout, "origin/main") == {simnpu}
    audit = audit_repository(shared.checkout, changed_since="origin/main")
    assert [a.key for a in audit.submissions] == [simnpu] and audit.passed
    since = ["--changed-since", "origin/main"]
    assert main(["audit", str(shared.checkout), *since, *shared.audit_args]) == 0
    out = capsys.readouterr().out
    assert str(simnpu) in out and "/cpu/" not in out


def test_changed_since_a_ref_git_does_not_know_is_one_line(
    shared: SharedRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    since = ["--changed-since", "no-such-ref"]
    code = main(["audit", str(shared.checkout), *since, *shared.audit_args])
    err = capsys.readouterr().err
    assert code == ExitCode.INPUT_ERROR
    assert err.startswith("ckit: error: git diff failed: fatal: ") and err.count("\n") == 1


def _unsigned(run_dir: Path) -> str:
    write_unsigned_envelope(run_dir)
    return "step 3: unsigned report (written with --no-sign)"


def _tampered(run_dir: Path) -> str:
    path = run_dir / "results.csv"
    path.write_bytes(path.read_bytes().replace(b"PASS", b"PASS ", 1))
    return "step 7: results.csv was modified after signing"


@pytest.mark.parametrize("attack", [_unsigned, _tampered], ids=["unsigned-run", "tampered-run"])
def test_submit_refuses_before_writing_anything(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, attack: object,
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(shared.runs["cpu"], run_dir)
    assert callable(attack)
    expected = attack(run_dir)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    before = _remote_refs(shared.origin)
    code = main(["submit", str(run_dir), "--repo", str(shared.origin), "--push"])
    err = capsys.readouterr().err
    assert code == ExitCode.VERIFICATION_FAILED
    assert err.startswith(f"ckit: error: {run_dir}: not submitted: {expected}")
    assert err.count("\n") == 1
    assert _remote_refs(shared.origin) == before
    assert list(scratch.iterdir()) == []  # not even the clone is left behind


def test_submit_refuses_a_run_already_in_the_repository(
    shared: SharedRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _remote_refs(shared.origin)
    code = main(["submit", str(shared.runs["cpu"]), "--repo", str(shared.origin), "--push"])
    err = capsys.readouterr().err
    key = _key_of(shared.branches["cpu"])
    assert code == ExitCode.INPUT_ERROR
    assert err == f"ckit: error: {key} already exists in the repository: this run was submitted\n"
    assert _remote_refs(shared.origin) == before


def test_submitting_a_run_twice_says_it_is_already_submitted(
    shared: SharedRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """simnpu's branch is pushed, not merged: a second submit names it, never git's push hint."""
    before = _remote_refs(shared.origin)
    code = main(["submit", str(shared.runs["simnpu"]), "--repo", str(shared.origin), "--push",
                 *shared.audit_args])
    err = capsys.readouterr().err
    key, branch = _key_of(shared.branches["simnpu"]), shared.branches["simnpu"]
    assert code == ExitCode.INPUT_ERROR
    assert err == (f"ckit: error: {key} is already submitted: branch {branch} of "
                   f"{shared.origin} holds it, awaiting review; nothing to do\n")
    assert _remote_refs(shared.origin) == before


def test_without_push_the_commit_stays_in_a_kept_clone_by_the_kit_author(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    origin = tmp_path / "origin.git"
    git(["clone", "--quiet", "--bare", str(shared.seed), str(origin)], tmp_path)
    before = _remote_refs(origin)
    # No git identity anywhere: the commit is by the kit's default author.
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    code = main(["submit", str(shared.runs["simnpu"]), "--repo", str(origin),
                 "--branch", "submit/simnpu-june", *shared.audit_args])
    out = capsys.readouterr().out
    assert code == ExitCode.OK
    assert field(out, "branch") == "submit/simnpu-june"
    clone = Path(field(out, "clone").split(" (")[0])
    try:
        assert _remote_refs(origin) == before
        author = git(["log", "-1", "--format=%an <%ae>", "submit/simnpu-june"], clone).strip()
        assert author == "ckit <ckit@localhost>"
        assert audit_repository(clone).passed
    finally:
        shutil.rmtree(clone.parent)


def _summary_claiming_all_passed(shared: SharedRepo, run_dir: Path) -> list[str]:
    (run_dir / "summary.md").write_text("# simnpu: conformant\n\nAll 3068 tests passed.\n")
    sign_output_dir(run_dir, shared.keys["simnpu"], None)
    return ["not submitted: step 13: summary.md is not what report.json renders",
            *shared.audit_args]


def _narrowed_run_under_the_standards_acceptance_policy(shared: SharedRepo, run_dir: Path
                                                        ) -> list[str]:
    auditor = shared.audit_args
    policy = auditor.index("--acceptance-policy")
    return ["not submitted: the audit would refuse it at check 8 (acceptance policy: ",
            *auditor[:policy], *auditor[policy + 2:]]


def _keyring_the_auditors_roots_do_not_sign(shared: SharedRepo, run_dir: Path) -> list[str]:
    auditor = shared.audit_args
    roots = auditor.index("--trust-roots")
    return ["not submitted: the audit would refuse it at check 9 (signing key valid for the "
            "vendor when the submission entered the repository): the keyring is not trusted",
            *auditor[roots + 2:]]


@pytest.mark.parametrize("attack", [
    _summary_claiming_all_passed, _narrowed_run_under_the_standards_acceptance_policy,
    _keyring_the_auditors_roots_do_not_sign,
], ids=lambda attack: attack.__name__.strip("_"))
def test_submit_refuses_what_the_audit_would_refuse(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, attack: Callable[[SharedRepo, Path], list[str]],
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(shared.runs["simnpu"], run_dir)
    expected, *auditor = attack(shared, run_dir)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    before = _remote_refs(shared.origin)
    code = main(["submit", str(run_dir), "--repo", str(shared.origin), "--push", *auditor])
    err = capsys.readouterr().err
    assert code == ExitCode.VERIFICATION_FAILED, err
    assert err.startswith(f"ckit: error: {run_dir}: {expected}"), err
    assert err.count("\n") == 1
    assert _remote_refs(shared.origin) == before
    assert list(scratch.iterdir()) == []


def test_a_branch_name_git_refuses_is_one_line(
    shared: SharedRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["submit", str(shared.runs["simnpu"]), "--repo", str(shared.seed),
                 "--branch", "bad..name"])
    assert code == ExitCode.INPUT_ERROR
    assert capsys.readouterr().err == (
        "ckit: error: branch name 'bad..name' is not a valid git branch name\n"
    )


def test_the_narrowed_runs_submitted_here_exit_partial(shared: SharedRepo) -> None:
    """`ckit run --select` whose tests all pass: not non-conformant's exit 1, but partial's."""
    for vendor in ("cpu", "simnpu"):
        done = shared.ran[vendor]
        assert done.returncode == ExitCode.PARTIAL, done.stderr[-2000:]
        assert done.stdout.splitlines()[-1] == (
            "grade: non-conformant (partial: the tests it ran meet conformant; only a complete "
            "run is graded conformant)")
