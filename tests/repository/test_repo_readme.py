"""The README's shared-repository walkthrough, run as written, and what a vendor's report cannot
say about its vendor.

The block under "From `ckit repo init` to the portal" runs in a scratch directory laid out as a
kit checkout after ``make certify VENDOR=cpu``: ``.venv/bin/ckit`` (this kit), ``results/cpu``
(the session's real cpu run, ``conftest.py``) and ``signing/keyring/cpu/`` (its public key).
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from repository_helpers import KIT_ROOT, SharedRepo, ckit, field, git

from kit.formats.files import write_report_files
from kit.rundir import report_files
from kit.signing.sign import sign_output_dir

#: About ten ckit subprocesses over the session's shared runs (no run of its own).
pytestmark = pytest.mark.slow(seconds=60)

HEADING = "### From `ckit repo init` to the portal"
#: What the walkthrough's keyring says cpu is (the README's `ckit keys vendor` line).
KEYRING_NAME = "CPU reference"
IMPOSTOR = "NVIDIA Corporation (H100)"


def readme_block() -> str:
    """The first ``sh`` block after the heading: the commands as a reader copies them."""
    section = (KIT_ROOT / "README.md").read_text(encoding="utf-8").split(HEADING, 1)[1]
    return section.split("```sh\n", 1)[1].split("```", 1)[0]


@dataclasses.dataclass(frozen=True)
class Walkthrough:
    workspace: Path
    env: dict[str, str]
    done: subprocess.CompletedProcess[str]

    @property
    def checkout(self) -> Path:
        return self.workspace / "checkout"


def _workspace(shared: SharedRepo, workspace: Path) -> None:
    ckit_script = workspace / ".venv" / "bin" / "ckit"
    ckit_script.parent.mkdir(parents=True)
    ckit_script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kit "$@"\n', encoding="utf-8")
    ckit_script.chmod(0o755)
    shutil.copytree(shared.runs["cpu"], workspace / "results" / "cpu")
    (public,) = (shared.seed / "keyring" / "cpu").glob("*.pub.pem")
    (workspace / "signing" / "keyring" / "cpu").mkdir(parents=True)
    shutil.copy(public, workspace / "signing" / "keyring" / "cpu" / public.name)


@pytest.fixture(scope="module")
def walkthrough(shared: SharedRepo, tmp_path_factory: pytest.TempPathFactory) -> Walkthrough:
    workspace = tmp_path_factory.mktemp("readme-walkthrough")
    _workspace(shared, workspace)
    env = {**shared.env, "GIT_AUTHOR_NAME": "Maintainer", "GIT_AUTHOR_EMAIL": "m@example.org",
           "GIT_COMMITTER_NAME": "Maintainer", "GIT_COMMITTER_EMAIL": "m@example.org"}
    done = subprocess.run(["bash", "-eu", "-c", readme_block()], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    return Walkthrough(workspace, env, done)


def test_readme_repository_section_runs_as_written(walkthrough: Walkthrough) -> None:
    done = walkthrough.done
    assert done.returncode == 0, done.stderr
    assert "PASSED: 1 submission(s) audited, 0 failed; repository checks passed" in done.stdout
    assert "gate: CLOSED" in done.stdout and "gate closed: 7" in done.stdout
    index = (walkthrough.workspace / "site" / "index.html").read_text(encoding="utf-8")
    assert "PyTorch 2.13: release gate CLOSED</h1>" in index
    assert f'<a href="vendors/cpu.html">{KEYRING_NAME}</a> <span class="required">' in index
    repo = walkthrough.checkout
    assert (repo / ".github" / "workflows" / "ckit.yml").is_file()
    assert len(list((repo / "ckit" / "roots").glob("*.pub.pem"))) == 1
    tracked = git(["ls-files"], repo).split()
    assert not [p for p in tracked if b"PRIVATE KEY" in (repo / p).read_bytes()]
    assert b"PRIVATE KEY" in (walkthrough.workspace / "offline" / "root.pem").read_bytes()


def _renamed_run(walkthrough: Walkthrough, shared: SharedRepo) -> Path:
    """cpu's run with the report's vendor renamed, its files rewritten, re-signed by cpu."""
    report = json.loads((walkthrough.workspace / "results" / "cpu" / "report.json").read_text())
    report["vendor"].update(display_name=IMPOSTOR, contact="Jensen <security@nvidia.example>",
                            docs_url="https://nvidia.example/ckit")
    run = walkthrough.workspace / "results" / "impostor"
    write_report_files(report, run)
    assert {p.name for p in run.iterdir()} == set(report_files())
    sign_output_dir(run, shared.keys["cpu"], None)
    return run


def test_vendor_renaming_itself_in_its_report_shows_the_keyring_name(
    walkthrough: Walkthrough, shared: SharedRepo
) -> None:
    """The report is cpu's, validly signed: the audit accepts it, and every page still names
    cpu as the root-signed keyring does, never as the report does."""
    assert walkthrough.done.returncode == 0, walkthrough.done.stderr
    run = _renamed_run(walkthrough, shared)
    env, repo = walkthrough.env, walkthrough.checkout
    origin = walkthrough.workspace / "results.git"
    config = ["--repo-config", str(repo / "ckit")]
    submitted = ckit(["submit", str(run), "--repo", str(origin), "--push", *config], env)
    assert submitted.returncode == 0, submitted.stderr
    git(["fetch", "--quiet", "origin"], repo)
    git(["checkout", "--quiet", field(submitted.stdout, "branch")], repo)
    audited = ckit(["audit", str(repo), "--changed-since", "main", *config], env)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    site = walkthrough.workspace / "impostor-site"
    built = ckit(["portal", str(repo), *config, "-o", str(site)], env)
    assert built.returncode == 0, built.stderr
    pages = {p: p.read_text(encoding="utf-8") for p in site.rglob("*.html")}
    (submission,) = [html for page, html in pages.items() if "submissions" in page.parts]
    assert '<span class="audit-passed">audit passed</span>' in submission
    for page, html in pages.items():
        assert "NVIDIA" not in html and "nvidia" not in html, page
    vendor = pages[site / "vendors" / "cpu.html"]
    assert re.search(rf"<h1>{KEYRING_NAME} <small><code>cpu</code></small></h1>", vendor)
    assert '<a href="https://example.org/ckit/cpu">' in vendor

