"""Reports of the standards the kit carries stay verifiable and auditable, whatever kit made them.

The fixture ``tests/fixtures/reports/v1-before-house/`` is a signed v1 report made by the kit
before its restructuring (its README says how); its private key is gone. This kit must still
verify it, and audit it in a real shared repository: a git repository whose keyring holds the
fixture's public key, signed by a root the auditor pins, the run filed by ``ckit submit``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kit.errors import ExitCode
from kit.report.model import Report, ReportError
from kit.standard.catalogue import carried_versions

KIT_ROOT = Path(__file__).resolve().parents[2]
FIXTURE = KIT_ROOT / "tests" / "fixtures" / "reports" / "v1-before-house"
ENVELOPE = FIXTURE / "report.dsse.json"
AUTHOR = ["-c", "user.name=Test Maintainer", "-c", "user.email=maintainer@example.org"]
#: The shared repository's bar for this report: its standard and release, the vendor of the
#: path. Not a released kit (the fixture's is a development checkout) nor a grade (narrowed).
POLICY = 'standard: v1\ntorch_release: "2.13"\nvendor_is_submission_path: true\n'


def ckit(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kit", *args], cwd=KIT_ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def git(args: list[str], cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {args}: {done.stderr}"
    return done.stdout


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The checkout's kit and standards, keys under tmp_path, nothing from the caller."""
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("CKIT_HOME", "CKIT_SIGNING_KEY", "CKIT_TODAY")}
    environment["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(KIT_ROOT), environment.get("PYTHONPATH")]))
    return environment


def shared_repository(base: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """A bare origin whose main holds a keyring of the fixture's key, signed by a root; and the
    directory of the auditor's pinned root public key."""
    seed, roots = base / "seed", base / "auditor" / "roots"
    git(["init", "--quiet", "-b", "main", str(seed)], base)
    ok(ckit(["keys", "root-generate", "--out", str(base / "offline" / "root.pem"),
             "--public-dir", str(roots)], env))
    for public in sorted((FIXTURE / "keyring").glob("*/*.pub.pem")):
        ok(ckit(["keys", "add", "--keyring", str(seed / "keyring"), "--vendor",
                 public.parent.name, "--public-key", str(public), "--not-before", "2020-01-01"],
                env))
    ok(ckit(["keys", "sign-keyring", "--keyring", str(seed / "keyring"),
             "--root-key", str(base / "offline" / "root.pem")], env))
    (seed / "README.md").write_text("Conformance results, one directory per submission.\n")
    git(["add", "."], seed)
    git([*AUTHOR, "commit", "--quiet", "-m", "The shared repository"], seed)
    origin = base / "origin.git"
    git(["clone", "--quiet", "--bare", str(seed), str(origin)], base)
    return origin, roots


def test_the_report_made_before_the_restructuring_still_verifies(env: dict[str, str]) -> None:
    done = ckit(["verify", str(ENVELOPE), "--keyring", str(FIXTURE / "keyring"),
                 "--files", str(FIXTURE)], env)
    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stdout.splitlines()[0] == (
        "OK: cpu report signed by 45913e0ac6c5ebad, kit 0.1.0, grade non-conformant"
    )
    assert "not a released kit" in done.stdout


@pytest.fixture
def filed(tmp_path: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """A checkout of the shared repository with the fixture filed by ``ckit submit``, and the
    auditor's roots."""
    origin, roots = shared_repository(tmp_path, env)
    policy = tmp_path / "submit-policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    submitted = ok(ckit(["submit", str(FIXTURE), "--repo", str(origin), "--push",
                         "--trust-roots", str(roots), "--policy", str(policy)], env))
    branch = next(line.split(":", 1)[1].strip() for line in submitted.splitlines()
                  if line.startswith("branch:"))
    checkout = tmp_path / "checkout"
    git(["clone", "--quiet", "--branch", branch, str(origin), str(checkout)], tmp_path)
    return checkout, roots


def audit(filed: tuple[Path, Path], env: dict[str, str], *options: str) -> dict[str, Any]:
    checkout, roots = filed
    done = ckit(["audit", str(checkout), "--trust-roots", str(roots), *options, "--json"], env)
    assert done.returncode in (ExitCode.OK, ExitCode.VERIFICATION_FAILED), done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    assert (done.returncode == ExitCode.OK) == result["passed"]
    return result


def failed_checks(result: dict[str, Any]) -> list[str]:
    return [check["title"] for submission in result["submissions"]
            for check in submission["checks"] if not check["passed"]]


def test_the_report_made_before_the_restructuring_passes_the_audit(
    tmp_path: Path, filed: tuple[Path, Path], env: dict[str, str]
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    result = audit(filed, env, "--policy", str(policy))
    assert result["passed"], failed_checks(result)
    [submission] = result["submissions"]
    numbers = [check["number"] for check in submission["checks"]]
    assert sorted(set(numbers)) == list(range(1, 12)) and numbers.count(8) == 3  # the policy


def test_by_default_the_audit_applies_the_acceptance_policy_of_the_reports_standard(
    filed: tuple[Path, Path], env: dict[str, str]
) -> None:
    # v1's acceptance.yaml asks for a released kit, a grade and a clean skip policy: a narrowed
    # run of a development kit meets its other conditions only (max-age too, for a year).
    failed = failed_checks(audit(filed, env))
    assert [title for title in failed if title != "acceptance policy: max-age"] == [
        "acceptance policy: released-kit", "acceptance policy: min-grade",
        "acceptance policy: skip-policy",
    ]


def test_a_report_of_a_standard_the_kit_does_not_carry_is_refused_in_one_line() -> None:
    report = json.loads((FIXTURE / "report.json").read_text(encoding="utf-8"))
    report["standard"]["version"] = "v9"
    with pytest.raises(ReportError) as refused:
        Report.from_json(report)
    assert str(refused.value) == (
        f"report names standard 'v9', which this kit does not know "
        f"(it knows {', '.join(carried_versions())})"
    )
