"""``ckit gate`` fails closed: with nothing to judge it says why and exits with its own code.

The repositories are real git checkouts; the submissions real, signed reports
(tests/portal/submission_helpers.py), gated by the real command.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "portal"))

from submission_helpers import NOW, SMALL_SELECT, Repository, Run, audit  # noqa: E402

from kit.cli import main  # noqa: E402
from kit.errors import ExitCode  # noqa: E402
from kit.repository.gate import evaluate_gate, known_releases, load_gate_policy  # noqa: E402
from kit.tiers.registry import complete_run_tiers  # noqa: E402

KIT_ROOT = Path(__file__).resolve().parents[2]
AUTHOR = ["-c", "user.name=Test Maintainer", "-c", "user.email=maintainer@example.org"]
#: A release manager's policy for the narrowed test runs: acme required.
POLICY = {"min_pass_rate": {"models": 0.95}, "min_grade": "non-conformant",
          "required_vendors": ["acme"], "max_failing_age_hours": 72}


@pytest.fixture(autouse=True)
def private_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("CKIT_SIGNING_KEY", raising=False)


def _commit_all(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("Conformance results, one directory per submission.\n")
    for args in (["init", "--quiet", "-b", "main"], ["add", "."],
                 [*AUTHOR, "commit", "--quiet", "-m", "The shared repository"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


def _policy(tmp_path: Path) -> Path:
    path = tmp_path / "release-gate.yaml"
    path.write_text(yaml.safe_dump(POLICY), encoding="utf-8")
    return path


def _gate(release: str, repo: Path, policy: Path | None,
          capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    chosen = ["--gate-policy", str(policy)] if policy is not None else []
    code = main(["gate", "--release", release, *chosen, str(repo)])
    return code, capsys.readouterr().out.splitlines()


def test_empty_repository_closes_the_gate_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _commit_all(tmp_path / "repo")
    code, lines = _gate("2.13", repo, _policy(tmp_path), capsys)
    assert code == ExitCode.GATE_NOTHING_TO_JUDGE
    assert "closed: the repository holds no submission" in lines
    assert lines[-1] == "gate: CLOSED"


def test_a_repository_with_no_commit_yet_says_so_never_git(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Just after `ckit repo init`, before the maintainers' first commit; the release spelled as
    `ckit version` prints it, and the gate policy by its old option name."""
    repo = tmp_path / "results"
    assert main(["repo", "init", str(repo), "--root-key", str(tmp_path / "root.pem"),
                 "--kit-repository", "example/ckit", "--required-vendor", "acme"]) == 0
    capsys.readouterr()
    code = main(["gate", "--release", "2.13.0", "--repo-config", str(repo / "ckit"),
                 "--policy", str(_policy(tmp_path)), str(repo)])
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert code == ExitCode.GATE_NOTHING_TO_JUDGE
    assert lines[0].startswith("release 2.13 (at ")
    assert [line for line in lines if line.startswith("closed: ")] == [
        "closed: the repository has no commit yet: commit what `ckit repo init` wrote "
        "(git add -A && git commit), then vendors submit to it",
        "closed: the repository holds no submission",
    ]
    assert "fatal" not in captured.out + captured.err and "repository check" not in captured.out
    assert captured.err == "ckit: --policy is deprecated here; use --gate-policy\n"


def test_unknown_release_without_submissions_closes_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repository = Repository(tmp_path / "repo")
    repository.submit(Run("acme", NOW, select=SMALL_SELECT))
    repo = _commit_all(repository.root)
    code, lines = _gate("99.0", repo, _policy(tmp_path), capsys)
    assert code == ExitCode.GATE_NOTHING_TO_JUDGE
    closed = [line for line in lines if line.startswith("closed: ")]
    assert closed == [
        "closed: release 99.0 is certified by no standard this kit carries (they certify "
        f"{', '.join(known_releases())})",
        "closed: the repository holds no submission for release 99.0",
    ]
    assert re.match(r"acme \* +(- +){6,}missing \(required\)", lines[2]), lines


def test_default_policy_requiring_no_vendor_does_not_open_the_gate(tmp_path: Path) -> None:
    repository = Repository(tmp_path / "repo")
    repository.submit(Run("acme", NOW, select=SMALL_SELECT))
    _commit_all(repository.root)
    result = evaluate_gate(audit(repository), "2.13", load_gate_policy(), NOW)
    assert not result.open
    assert result.closures == ("the gate policy requires no vendor (required_vendors is empty): "
                               "list the vendors the release needs",)


def test_the_default_policy_asks_for_the_tiers_make_certify_runs() -> None:
    """`make certify` runs `ckit run` without --tier: the tiers of a complete run. The default
    policy may only require tiers that run holds, or every certified vendor would be fixing."""
    required = set(load_gate_policy().min_pass_rate)
    assert required and required <= set(complete_run_tiers())
    recipe = (KIT_ROOT / "Makefile").read_text().split("\ncertify-run:", 1)[1].split("\n\n")[0]
    assert "$(CKIT) run --vendor $(VENDOR) --out $(OUT) $(CERTIFY_ARGS)" in recipe
    assert "--tier" not in recipe


def test_cli_help_documents_the_nothing_to_judge_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["gate", "--help"])
    help_text = capsys.readouterr().out
    nothing = int(ExitCode.GATE_NOTHING_TO_JUDGE)
    assert f"  {nothing}  gate closed with nothing to judge" in help_text
    assert f"  {int(ExitCode.GATE_CLOSED)}  gate closed: a required vendor" in help_text
