"""``ckit repo init``'s refusals: the root's private key never inside the repository, and never
over someone's files (the whole path from init to the portal: test_repo_readme.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.cli import main
from kit.errors import ExitCode


def _init(capsys: pytest.CaptureFixture[str], repo: Path, root_key: Path) -> tuple[int, str]:
    code = main(["repo", "init", str(repo), "--root-key", str(root_key),
                 "--kit-repository", "example/ckit"])
    return code, capsys.readouterr().err


def test_root_key_inside_the_repository_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    code, err = _init(capsys, repo, repo / "keys" / "root.pem")
    assert code == ExitCode.INPUT_ERROR
    assert err == (f"ckit: error: --root-key {repo}/keys/root.pem is inside the repository; the "
                   "root's private key must stay out of it (offline)\n")
    assert not repo.exists()


def test_a_directory_holding_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text("mine\n", encoding="utf-8")
    code, err = _init(capsys, repo, tmp_path / "root.pem")
    assert code == ExitCode.INPUT_ERROR
    assert err == f"ckit: error: {repo} is not empty; `ckit repo init` starts a new repository\n"
    assert [p.name for p in repo.iterdir()] == ["notes.txt"]
    assert not (tmp_path / "root.pem").exists()
