"""The README's "A new PyTorch release" block as written, on the second release's torch, in a
fresh clone of the kit as it was before the standard certifying that release (its newest
carried standard and every later one removed): a vendor on a release the kit does not carry yet.

The block's ``ckit`` is the second release's interpreter running the code under test with the
clone as its checkout (``CKIT_HOME``), first on ``PATH``; ``../shared/corpus`` is the shared
corpus beside the clone. What the block takes as given is made first, as its reader had it: cpu's
signing key and its last certification on the release before (``results/cpu-certified``: add's
unit tests, signed, on the installed torch).

In ``make test-full``: the canary is every tier of the parent standard (minutes), and ``standard
new`` regenerates every locked list. CI's heavy suite runs the same steps narrowed
(``test_second_release.py``). The block runs under ``bash -u`` without ``-e``: a canary is graded
not-certifiable, which is not a success exit; every command's outcome is checked in what it wrote.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from readme_clone import KIT_ROOT, fresh_clone, readme_block
from second_release_env import SecondRelease

from kit import paths
from kit.errors import ExitCode
from kit.report.read import read_report
from kit.results import Status
from kit.standard.catalogue import carried_versions

pytestmark = [pytest.mark.slow(seconds=1200), pytest.mark.full]

HEADING = "### A new PyTorch release"
CORPUS = KIT_ROOT.parent / "shared" / "corpus"


def _kit_before(second: SecondRelease, workspace: Path) -> Path:
    """A fresh clone without the standard certifying the second release, nor any later one."""
    kit = fresh_clone(workspace / "kit")
    carried = carried_versions()
    for version in carried[carried.index(second.standard):]:
        shutil.rmtree(kit / "standards" / version)
    (workspace / "shared").mkdir()
    (workspace / "shared" / "corpus").symlink_to(CORPUS)
    return kit


def _ckit_on_path(second: SecondRelease, kit: Path, bin_dir: Path) -> None:
    bin_dir.mkdir()
    script = bin_dir / "ckit"
    script.write_text(f'#!/bin/sh\nCKIT_HOME="{kit}" PYTHONSAFEPATH=1 exec "{second.python}" '
                      f'-m kit "$@"\n', encoding="utf-8")
    script.chmod(0o755)


def _given(kit: Path, env: dict[str, str]) -> None:
    """cpu's key and its last certification on the installed (the previous) release: add's
    unit tests, a narrowed run (``PARTIAL``)."""
    for args, expected in (
        (["keys", "generate", "--vendor", "cpu", "--if-missing"], ExitCode.OK),
        (["run", "--vendor", "cpu", "--tier", "unit", "--select", "unit/opinfo/add/*/*",
          "--out", "results/cpu-certified"], ExitCode.PARTIAL),
    ):
        done = subprocess.run([".venv/bin/ckit", *args], cwd=kit, env=env, capture_output=True,
                              text=True, check=False)
        assert done.returncode == expected, done.stderr[-2000:]


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no shared corpus at {CORPUS}")
def test_the_new_release_block_runs_as_written(second: SecondRelease, tmp_path: Path) -> None:
    kit = _kit_before(second, tmp_path)
    _ckit_on_path(second, kit, tmp_path / "bin")
    env = {**os.environ, "HF_HUB_OFFLINE": "1",
           "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    _given(kit, env)
    done = subprocess.run(["bash", "-u", "-c", readme_block(HEADING)], cwd=kit, env=env,
                          capture_output=True, text=True, timeout=3600, check=False)
    said = done.stdout + done.stderr[-3000:]

    canary = read_report(kit / "results" / "cpu").report
    assert canary.run.canary is True and canary.standard.version == second.parent, said
    statuses = {r.status for r in canary.records}
    assert Status.ERROR not in statuses and Status.CRASH not in statuses, said
    assert any(r.details.get("na_reason") == "not-in-release" for r in canary.records)
    assert any(r.details.get("inputs_changed") for r in canary.records)
    # standard new made the committed standard again, under the name it has.
    ours, theirs = paths.standards_dir() / second.standard, kit / "standards" / second.standard
    for name in sorted(p.name for p in (ours / "tests").iterdir()):
        assert (theirs / "tests" / name).read_text() == (ours / "tests" / name).read_text(), name
    assert f"standard {second.standard} for PyTorch {second.release} written to" in said
    # check-corpus judged every pair, none failing; then the comment against the baseline.
    assert ", 0 FAIL" in said, said
    assert f"Against `cpu`'s run of standard `{second.parent}`" in said, said
    assert "Baseline verified: signed by key" in said, said
