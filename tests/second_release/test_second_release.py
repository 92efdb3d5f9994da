"""The kit on a second PyTorch release, for real: in an environment of that release's torch
(``make install TORCH=X.Y.Z VENV=.venv-X.Y.Z``), the newest carried standard certifying it is
remade by ``ckit standard new`` from its parent (every list the same), a canary of the parent
(the ops whose tests the release changed or lacks) runs there with no ERROR (its tests the
release lacks are not applicable, not-in-release), and the built-in ``cpu`` vendor's tests meet
conformant on one fixed shard of the standard (``SHARD``).

Why a shard, not the complete run: ``standard new`` above already calls every test's case on the
release's CPU (a case CPU refuses is not locked), and the complete run of the default release is
``make certify`` (``tests/runner/test_e2e_certify_cpu.py``); a complete run here was 9 minutes of
CI's 30 (README, "Set up"). A shard is every tier, split by the kit's own hash: what would break
a tier on this release breaks some of its tests in any shard. The complete run is ``make certify
VENDOR=cpu VENV=.venv-<release>``.

The environment is found by ``CKIT_SECOND_RELEASE_PYTHON`` (its interpreter), else the
repository's ``.venv-<release>/`` of the newest carried release other than the installed one's.
Without one these tests skip with the reason; ``CKIT_REQUIRE_SECOND_RELEASE=1`` (CI) makes that
a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from second_release_env import SecondRelease

from kit import paths
from kit.report.read import read_report
from kit.repository.layout import torch_release_of
from kit.results import Status
from kit.rundir import RunDir
from kit.standard.catalogue import carried_versions
from kit.tiers.registry import complete_run_tiers

pytestmark = [pytest.mark.heavy, pytest.mark.slow(seconds=300)]

KIT_ROOT = Path(__file__).resolve().parents[2]
#: The shard of the standard the cpu vendor runs here (``ckit run --shard``).
SHARD = "9/16"


def ckit(second: SecondRelease, args: list[str], home: Path | None = None,
         timeout: float = 1500) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("CKIT_HOME", None)
    if home is not None:
        env["CKIT_HOME"] = str(home)
    return subprocess.run([str(second.python), "-m", "kit", *args], cwd=KIT_ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _changed_ops(second: SecondRelease) -> list[str]:
    """``--select`` of every op with a test the release changed or lacks (the canary's news;
    the whole unit tier's canary is the same run, minutes longer)."""
    tiers = _changes(second)["tiers"]["unit"]
    ids = tiers["vanished"]["tests"] + tiers["changed-inputs"]["tests"]
    ops = sorted({"/".join(test_id.split("/")[:3]) for test_id in ids})
    return [arg for op in ops for arg in ("--select", f"{op}/*/*")]


def _changes(second: SecondRelease) -> dict[str, Any]:
    path = paths.standards_dir() / second.standard / "tests" / "changes.yaml"
    return dict(yaml.safe_load(path.read_text()))


@pytest.fixture(scope="module")
def remade(second: SecondRelease, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A kit home carrying the standards before the second release's (its parent and up): a
    canary of the parent there, then ``ckit standard new --from <parent>``."""
    home = tmp_path_factory.mktemp("home")
    chain = carried_versions()[: carried_versions().index(second.parent) + 1]
    for version in chain:
        shutil.copytree(paths.standards_dir() / version, home / "standards" / version)
    shutil.copy(paths.standards_dir() / "released-kits.yaml", home / "standards")
    shutil.copytree(paths.vendors_dir() / "cpu", home / "vendors" / "cpu")
    canary = home.parent / "canary"
    ran = ckit(second, ["run", "--vendor", "cpu", "--tier", "unit", "--canary", "--no-sign",
                        *_changed_ops(second), "--out", str(canary)], home)
    assert RunDir(canary).is_finished(), ran.stderr[-3000:]
    made = ckit(second, ["standard", "new", "--from", second.parent, "--version",
                         second.standard], home)
    assert made.returncode == 0, made.stderr[-3000:]
    return {"home": home, "canary": canary}


def test_standard_new_remakes_the_committed_standard(
    second: SecondRelease, remade: dict[str, Path]
) -> None:
    ours = paths.standards_dir() / second.standard
    theirs = remade["home"] / "standards" / second.standard
    lists = sorted(p.relative_to(ours) for p in (ours / "tests").iterdir())
    assert lists == sorted(p.relative_to(theirs) for p in (theirs / "tests").iterdir())
    for name in lists:
        assert (theirs / name).read_text() == (ours / name).read_text(), name
    assert (theirs / "acceptance.yaml").read_text() == (ours / "acceptance.yaml").read_text()
    dated = re.compile(r"(?m)^released: .*$")  # the day it was made
    assert (dated.sub("", (theirs / "standard.yaml").read_text())
            == dated.sub("", (ours / "standard.yaml").read_text()))


def test_a_canary_of_the_parent_has_no_error_and_lists_what_the_release_lacks(
    second: SecondRelease, remade: dict[str, Path]
) -> None:
    # Read as the kit reads any run's report, whichever format its standard declares.
    report = read_report(remade["canary"]).report
    assert report.run.canary is True
    assert report.standard.version == second.parent
    statuses = [r.status for r in report.records]
    assert Status.ERROR not in statuses and Status.CRASH not in statuses
    absent = sorted(r.id for r in report.records
                    if r.details.get("na_reason") == "not-in-release")
    changes = _changes(second)
    assert absent == changes["tiers"]["unit"]["vanished"]["tests"]
    # Every changed-input test that ran says so; none other does.
    changed = set(changes["tiers"]["unit"]["changed-inputs"]["tests"])
    marked = {r.id for r in report.records if r.details.get("inputs_changed")}
    ran = {r.id for r in report.records if r.status not in (Status.NOT_APPLICABLE, Status.SKIPPED)}
    assert marked == changed & ran and marked


def test_cpu_meets_conformant_on_a_shard_of_the_second_release(
    second: SecondRelease, tmp_path: Path
) -> None:
    out = tmp_path / "cpu"
    ran = ckit(second, ["run", "--vendor", "cpu", "--shard", SHARD, "--no-sign",
                        "--out", str(out)])
    # The second release's standard (v3) writes a body, not report.json: read either.
    report = read_report(out).report
    assert (report.standard.version, report.environment["torch"]["version"]
            .split("+")[0]) == (second.standard, second.release)
    # A shard is graded when merged; alone, only its narrowing keeps it from conformant, and
    # every test it ran passed or does not apply.
    assert ran.returncode == 0, ran.stderr[-2000:]
    (reason,) = report.grade.reasons
    assert f"shard {SHARD}" in reason and "does not cover the whole standard" in reason, reason
    assert {r.status for r in report.records} <= {Status.PASS, Status.NOT_APPLICABLE}
    # Every tier of a complete run is in the shard.
    assert {r.tier for r in report.records} == set(complete_run_tiers())


def _installed(args: list[str]) -> subprocess.CompletedProcess[str]:
    """``ckit ARGS`` on the installed (the first) release."""
    env = {k: v for k, v in os.environ.items() if k not in ("CKIT_HOME", "CKIT_SIGNING_KEY")}
    done = subprocess.run([sys.executable, "-m", "kit", *args], cwd=KIT_ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, (args, done.stderr[-2000:])
    return done


def test_a_repository_made_on_the_first_release_takes_the_second_releases_run(
    second: SecondRelease, tmp_path: Path
) -> None:
    """``ckit repo init`` on the installed release; cpu's signed run on the second release is
    submitted there (its pre-check is the repository's audit), filed under the second release
    and judged against its own standard, which the repository's policy lists for it."""
    repo, root_key, keys = tmp_path / "repo", tmp_path / "offline" / "root.pem", tmp_path / "kr"
    _installed(["repo", "init", str(repo), "--root-key", str(root_key), "--kit-repository",
                "example/ckit", "--pilot", "--required-vendor", "cpu"])
    _installed(["keys", "generate", "--vendor", "cpu", "--keyring", str(keys), "--if-missing"])
    (public,) = (keys / "cpu").glob("*.pub.pem")
    _installed(["keys", "add", "--keyring", str(repo / "keyring"), "--vendor", "cpu",
                "--public-key", str(public), "--not-before", "2020-01-01"])
    _installed(["keys", "sign-keyring", "--keyring", str(repo / "keyring"), "--root-key",
                str(root_key)])
    author = ["-c", "user.name=M", "-c", "user.email=m@example.org"]
    for args in (["add", "-A"], [*author, "commit", "-q", "-m", "keyring"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    run = tmp_path / "cpu-second"
    ran = ckit(second, ["run", "--vendor", "cpu", "--tier", "unit", "--select",
                        "unit/opinfo/add/float32/*", "--out", str(run)])
    assert RunDir(run).is_finished(), ran.stderr[-2000:]
    submitted = _installed(["submit", str(run), "--repo", str(repo)]).stdout
    filed = f"submitted: submissions/{torch_release_of(second.release)}/cpu/"
    assert filed in submitted, submitted
