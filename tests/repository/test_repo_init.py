"""``ckit repo init``'s refusals: the root's private key never inside the repository, and never
over someone's files (the whole path from init to the portal: test_repo_readme.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

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


def test_root_key_inside_the_kit_checkout_is_refused_for_what_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not the vendor key's advice (CKIT_SIGNING_KEY): where the root key goes instead."""
    checkout = tmp_path / "kit-checkout"
    monkeypatch.setenv("CKIT_HOME", str(checkout))
    code, err = _init(capsys, tmp_path / "repo", checkout / "offline" / "root.pem")
    assert code == ExitCode.INPUT_ERROR
    assert err == (f"ckit: error: --root-key {checkout}/offline/root.pem is inside the kit "
                   f"checkout ({checkout}); the root's private key belongs outside it, then "
                   "offline: pass e.g. --root-key ~/ckit-offline/root.pem\n")
    assert not checkout.exists() and not (tmp_path / "repo").exists()


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


def test_the_repository_accepts_every_carried_release_under_its_own_standard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository outlives a release: its acceptance policy lists each carried torch release
    with the newest standard certifying it, so a run of either release is accepted, each judged
    against its own standard (the portal then shows one gate per release)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    code, err = _init(capsys, tmp_path / "repo", tmp_path / "root.pem")
    assert code == ExitCode.OK, err
    policy = yaml.safe_load((tmp_path / "repo" / "ckit" / "acceptance.yaml").read_text())
    # Both releases the kit carries (standards/: v1 and v2 certify 2.13.0, v3 2.14.1), each
    # with the newest standard certifying it.
    assert policy["standards"] == {"2.13": "v2", "2.14": "v3"}, policy
    assert "standard" not in policy and "torch_release" not in policy
