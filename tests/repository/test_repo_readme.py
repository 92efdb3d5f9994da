"""The README's shared-repository walkthrough and auditor lines, run as written in a fresh clone
of the kit, and what a vendor's report cannot say about its vendor.

The block under "From `ckit repo init` to the portal", then the auditor's and the release
manager's blocks, run in a ``git clone`` of this repository as the walkthrough's narrowed run
leaves it: ``.venv/bin/ckit`` (this kit's code, with the clone as its checkout: ``CKIT_HOME``,
so what the kit refuses to write inside its checkout is refused there), ``results/cpu-pilot``
(the session's real cpu run, ``conftest.py``) and ``signing/keyring/cpu/`` (its public key).
``HOME`` is the test's own: the walkthrough keeps the root key under ``~``, outside the checkout.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from readme_clone import fresh_clone, readme_block, run_block, untracked_files
from repository_helpers import SharedRepo, ckit, field, git

from kit.formats.files import write_report_files
from kit.rundir import report_files
from kit.signing.sign import sign_output_dir

#: About ten ckit subprocesses over the session's shared runs (no run of its own).
pytestmark = pytest.mark.slow(seconds=60)

HEADING = "### From `ckit repo init` to the portal"
AUDITOR_HEADING = "**For auditors**"
MANAGER_HEADING = "**For release managers:**"
VENDOR_HEADING = "**For vendors**"
#: The hosted repository the vendor's line names; git's own URL rewriting points it at a bare
#: clone of the walkthrough's repository, so the line runs as written.
HOSTED_URL = "git@example.org:conformance/results.git"
#: What the walkthrough's keyring says cpu is (the README's `ckit keys vendor` line).
KEYRING_NAME = "CPU reference"
IMPOSTOR = "NVIDIA Corporation (H100)"


@dataclasses.dataclass(frozen=True)
class Walkthrough:
    #: The fresh clone of the kit the blocks ran in.
    workspace: Path
    home: Path
    env: dict[str, str]
    done: subprocess.CompletedProcess[str]
    #: The auditor's block, run after the walkthrough in the same clone.
    audited: subprocess.CompletedProcess[str]
    #: The release manager's block, run after the auditor's.
    managed: subprocess.CompletedProcess[str]
    #: What the three blocks left that ``git status`` shows as new in the kit's clone.
    untracked: set[str]

    @property
    def checkout(self) -> Path:
        return self.workspace / "results" / "checkout"


def _fresh_clone(shared: SharedRepo, workspace: Path) -> None:
    """A fresh clone, then the walkthrough's narrowed run: the session's cpu run, and its key."""
    fresh_clone(workspace)
    shutil.copytree(shared.runs["cpu"], workspace / "results" / "cpu-pilot")
    (public,) = (shared.seed / "keyring" / "cpu").glob("*.pub.pem")
    (workspace / "signing" / "keyring" / "cpu").mkdir(parents=True)
    shutil.copy(public, workspace / "signing" / "keyring" / "cpu" / public.name)


@pytest.fixture(scope="module")
def walkthrough(shared: SharedRepo, tmp_path_factory: pytest.TempPathFactory) -> Walkthrough:
    base = tmp_path_factory.mktemp("readme-walkthrough")
    workspace, home = base / "kit", base / "home"
    home.mkdir()
    _fresh_clone(shared, workspace)
    env = {**shared.env, "HOME": str(home),
           "GIT_AUTHOR_NAME": "Maintainer", "GIT_AUTHOR_EMAIL": "m@example.org",
           "GIT_COMMITTER_NAME": "Maintainer", "GIT_COMMITTER_EMAIL": "m@example.org"}
    done = run_block(readme_block(HEADING), workspace, env)
    audited = run_block(readme_block(AUDITOR_HEADING), workspace, env)
    managed = run_block(readme_block(MANAGER_HEADING), workspace, env)
    return Walkthrough(workspace, home, env, done, audited, managed, untracked_files(workspace))


def test_readme_repository_section_runs_as_written(walkthrough: Walkthrough) -> None:
    done = walkthrough.done
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED: 1 submission(s) audited, 0 failed; repository checks passed" in done.stdout
    assert "gate: CLOSED" in done.stdout and "gate closed: 7" in done.stdout
    index = (walkthrough.workspace / "results" / "site" / "index.html").read_text(encoding="utf-8")
    assert "PyTorch 2.13: release gate CLOSED</h1>" in index
    assert f'<a href="vendors/cpu.html">{KEYRING_NAME}</a> <span class="required">' in index
    repo = walkthrough.checkout
    assert (repo / ".github" / "workflows" / "ckit.yml").is_file()
    assert len(list((repo / "ckit" / "roots").glob("*.pub.pem"))) == 1
    tracked = git(["ls-files"], repo).split()
    assert not [p for p in tracked if b"PRIVATE KEY" in (repo / p).read_bytes()]
    assert b"PRIVATE KEY" in (walkthrough.home / "ckit-offline" / "root.pem").read_bytes()
    # Nor the kit's checkout, where the walkthrough ran (its .gitignore would hide one there).
    pems = list(walkthrough.workspace.rglob("*.pem"))
    assert pems and not [p for p in pems if b"PRIVATE KEY" in p.read_bytes()]
    # The walkthrough writes under results/ (ignored): git shows the reader's checkout as it was,
    # but for cpu's public key, which the test put there as `make certify` does.
    assert {Path(p).parent for p in walkthrough.untracked} == {Path("signing/keyring/cpu")}


def test_readme_release_manager_lines_run_as_written(walkthrough: Walkthrough) -> None:
    """The portal, then the gate: closed (exit 7) on the walkthrough's narrowed run."""
    assert walkthrough.done.returncode == 0, walkthrough.done.stderr
    managed = walkthrough.managed
    assert managed.returncode == 7, managed.stdout + managed.stderr
    assert "gate: CLOSED" in managed.stdout
    index = (walkthrough.workspace / "results" / "site" / "index.html").read_text(encoding="utf-8")
    assert "PyTorch 2.13: release gate CLOSED</h1>" in index


#: When a submission entered the repository: the audit of the pull request says now, verify of
#: the merged submission its commit's time.
_MOMENT = re.compile(r"\(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)")


def _submission_lines(checklist: list[str]) -> list[str]:
    """The submission's own checklist: the audit's pull-request checks (4, 5) are the
    repository's, which verify of one filed submission has no ref for."""
    start = next(n for n, line in enumerate(checklist) if line.startswith("submissions/"))
    return [_MOMENT.sub("(<entered>)", line) for line in checklist[start:]]


def test_readme_auditor_lines_run_as_written(walkthrough: Walkthrough) -> None:
    """The audit, verify under the repository's configuration (the same checklist and
    decision) and ``ckit version``, on the walkthrough's submission."""
    assert walkthrough.done.returncode == 0, walkthrough.done.stderr
    audited = walkthrough.audited
    assert audited.returncode == 0, audited.stdout + audited.stderr
    checklists, version = audited.stdout.split("\nckit ", 1)
    passed = "PASSED: 1 submission(s) audited, 0 failed; repository checks passed"
    lines = checklists.splitlines()
    verdicts = [number for number, line in enumerate(lines) if line == passed]
    assert len(verdicts) == 2 and verdicts[1] == len(lines) - 1, checklists
    audit = _submission_lines(lines[:verdicts[0]])
    verify = _submission_lines(lines[verdicts[0] + 1:verdicts[1]])
    assert verify[0].startswith("submissions/2.13/cpu/") and verify == audit
    # Check 2 and check 8 agree on the kit: released, by the repository's list, which is named.
    integrity = next(line for line in audit if line.startswith("  2. "))
    assert integrity.startswith("  2. ✓ ") and "not yet released when it ran" in integrity
    assert any(line.startswith("  8. ✓ acceptance policy: released-kit: the kit that judged the "
                               "run is a released kit (results/checkout/ckit/released-kits.yaml)")
               for line in audit)
    assert "not a released kit" not in checklists
    assert "kit digest: " in version


def _renamed_run(walkthrough: Walkthrough, shared: SharedRepo) -> Path:
    """cpu's run with the report's vendor renamed, its files rewritten, re-signed by cpu."""
    pilot = walkthrough.workspace / "results" / "cpu-pilot"
    report = json.loads((pilot / "report.json").read_text())
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
    origin = walkthrough.workspace / "results" / "shared.git"
    config = ["--repo-config", str(repo / "ckit")]
    submitted = ckit(["submit", str(run), "--repo", str(origin), "--push", *config], env)
    assert submitted.returncode == 0, submitted.stderr
    git(["fetch", "--quiet", "origin"], repo)
    git(["checkout", "--quiet", field(submitted.stdout, "branch")], repo)
    audited = ckit(["audit", str(repo), "--changed-since", "main", *config], env)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    site = walkthrough.workspace / "results" / "impostor-site"
    built = ckit(["portal", str(repo), *config, "-o", str(site)], env)
    assert built.returncode == 0, built.stderr
    pages = {p: p.read_text(encoding="utf-8") for p in site.rglob("*.html")}
    (submission,) = [html for page, html in pages.items() if "submissions" in page.parts]
    assert '<span class="audit-passed">audit passed</span>' in submission
    for page, html in pages.items():
        if page.parent == site / "standards":
            continue  # the standard's own text (its calibration names the machines it ran on)
        assert "NVIDIA" not in html and "nvidia" not in html, page
    vendor = pages[site / "vendors" / "cpu.html"]
    assert re.search(rf"<h1>{KEYRING_NAME} <small><code>cpu</code></small></h1>", vendor)
    assert '<a href="https://example.org/ckit/cpu">' in vendor



def test_readme_vendor_line_runs_as_written(walkthrough: Walkthrough, tmp_path: Path) -> None:
    """``ckit submit results/cpu --repo HOSTED_URL --push`` as written: ``url.<bare
    clone>.insteadOf`` in the user's git config stands in for the hosting, and the pre-check
    judges by the repository's own ``ckit/`` (which lists this kit as released), where the
    kit's defaults (which list none) would refuse the run."""
    assert walkthrough.done.returncode == 0, walkthrough.done.stderr
    workspace = walkthrough.workspace
    hosted = tmp_path / "hosted.git"
    git(["clone", "--quiet", "--bare", str(workspace / "results" / "shared-repo"), str(hosted)],
        tmp_path)
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "{hosted}"]\n\tinsteadOf = {HOSTED_URL}\n', encoding="utf-8")
    env = {**walkthrough.env, "GIT_CONFIG_GLOBAL": str(config)}
    shutil.copytree(workspace / "results" / "cpu-pilot", workspace / "results" / "cpu")

    by_kit_defaults = subprocess.run(
        [".venv/bin/ckit", "submit", "results/cpu", "--repo", HOSTED_URL,
         "--released-kits", "standards/released-kits.yaml"],
        cwd=workspace, env=env, capture_output=True, text=True, check=False)
    assert by_kit_defaults.returncode != 0
    assert "the audit would refuse it at check" in by_kit_defaults.stderr, by_kit_defaults.stderr
    done = run_block(readme_block(VENDOR_HEADING), workspace, env)

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"pushed to: {HOSTED_URL}" in done.stdout
    branch = field(done.stdout, "branch")
    assert branch.startswith("submit/cpu/2.13/")
    assert git(["branch", "--list", branch], hosted).strip() == branch
