"""``ckit verify`` with acceptance options: integrity first, then one line per check.

The measured case of issue 8 is here for real: a copy of the kit with a loosened float32
tolerance has another digest (``ckit version`` says so), and a report it signed verifies for
integrity but is refused by ``--require-released``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acceptance_helpers import (
    CHECKOUT,
    SignedRun,
    finished_ago,
    kit_home_releasing,
    narrowed_report,
    report_json,
    sign_report,
)

from kit.cli import main
from kit.errors import ExitCode
from kit.hashing import kit_digest
from kit.standard.catalogue import standard_directory

SHIPPED_POLICY = str(standard_directory() / "acceptance.yaml")
LOOSE = "float32:  {atol: 1.0e-3, rtol: 1.0e-4}"


def verify(run: SignedRun, *options: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(run.verify_args(*options))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def narrowed_run(tmp_path: Path) -> SignedRun:
    return sign_report(tmp_path / "narrowed", narrowed_report())


def test_without_acceptance_options_verify_is_integrity_only(narrowed_run, capsys):
    code, out = verify(narrowed_run, capsys=capsys)
    assert code == ExitCode.OK
    assert out.startswith("OK: acme report signed by ") and "grade non-conformant" in out
    assert "✗" not in out and "ACCEPTED" not in out


def test_each_option_adds_its_check_and_any_failure_exits_4(narrowed_run, capsys):
    code, out = verify(
        narrowed_run, "--vendor", "acme", "--min-grade", "conformant-with-exceptions",
        "--max-age-days", "365", capsys=capsys,
    )
    lines = out.splitlines()
    assert code == ExitCode.VERIFICATION_FAILED
    assert lines[0].startswith("verified: acme report signed by ")
    assert "✓ vendor: the report is vendor acme's" in lines
    assert "✗ min-grade: grade non-conformant is below conformant-with-exceptions" in lines
    assert "✓ max-age: the run finished at most 365 days ago" in lines
    assert lines[-1] == "REJECTED: 1 of 3 acceptance checks not met"


def test_a_report_meeting_every_option_is_accepted(narrowed_run, capsys):
    code, out = verify(narrowed_run, "--vendor", "acme", "--max-age-days", "1", capsys=capsys)
    assert code == ExitCode.OK
    assert out.splitlines()[-1] == "ACCEPTED: all 2 acceptance checks met"


def test_an_old_run_fails_max_age(tmp_path: Path, capsys):
    old = sign_report(tmp_path, narrowed_report(finished=finished_ago(dt.timedelta(days=40))))
    code, out = verify(old, "--max-age-days", "30", capsys=capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    (line,) = [line for line in out.splitlines() if line.startswith("✗")]
    assert line.startswith("✗ max-age: the run finished on ")
    assert line.endswith(" days before " + dt.datetime.now(dt.UTC).date().isoformat()
                         + "; at most 30 days are accepted")


def test_another_vendors_report_fails_vendor(narrowed_run, capsys):
    code, out = verify(narrowed_run, "--vendor", "globex", capsys=capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert "✗ vendor: the report is vendor acme's, not globex's" in out.splitlines()


def test_an_unknown_grade_is_an_input_error_before_the_envelope_is_read(tmp_path, capsys):
    missing = SignedRun(tmp_path / "nowhere", tmp_path / "keyring")
    code, out = verify(missing, "--min-grade", "great", capsys=capsys)
    assert code == ExitCode.INPUT_ERROR
    assert out == (
        "ckit: error: no grade named 'great'; the grades, best first: conformant, "
        "conformant-with-exceptions, non-conformant, not-certifiable\n"
    )


def test_a_policy_file_with_an_unknown_key_is_refused_in_one_line(narrowed_run, tmp_path, capsys):
    policy = tmp_path / "policy.yaml"
    policy.write_text("min_grade: conformant\naccept_all: true\n", encoding="utf-8")
    code, out = verify(narrowed_run, "--acceptance-policy", str(policy), capsys=capsys)
    assert code == ExitCode.INPUT_ERROR
    assert out == (
        f"ckit: error: {policy}: accept_all: unknown key; the keys here are released_kit, "
        "standard, torch_release, standards, vendor, vendor_is_submission_path, min_grade, "
        "max_age_days, skip_policy_clean\n"
    )


def test_the_shipped_policy_needs_the_submissions_vendor(narrowed_run, capsys):
    code, out = verify(narrowed_run, "--acceptance-policy", SHIPPED_POLICY, capsys=capsys)
    assert code == ExitCode.INPUT_ERROR
    assert out.strip().endswith(
        "acceptance.yaml: vendor_is_submission_path: needs the vendor of the submission path "
        "(ckit verify --vendor)"
    )


def test_the_shipped_policy_accepts_a_complete_run_of_a_released_kit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, complete_report: dict[str, Any], capsys
):
    run = sign_report(tmp_path, complete_report)
    code, out = verify(run, "--acceptance-policy", SHIPPED_POLICY, "--vendor", "acme",
                       capsys=capsys)
    assert code == ExitCode.VERIFICATION_FAILED  # a development checkout is no release
    failed = [line for line in out.splitlines() if line.startswith("✗")]
    assert failed == [
        f"✗ released-kit: kit 0.1.0 with digest {kit_digest()[:16]} is not a released kit: its "
        "digest is not in standards/released-kits.yaml"
    ]
    monkeypatch.setenv("CKIT_HOME", str(kit_home_releasing(tmp_path / "home", kit_digest())))
    code, out = verify(run, "--acceptance-policy", SHIPPED_POLICY, "--vendor", "acme",
                       capsys=capsys)
    assert code == ExitCode.OK, out
    assert out.splitlines()[-1] == "ACCEPTED: all 7 acceptance checks met"


def kit_version_json(kit_root: Path) -> dict[str, Any]:
    """``python -m kit version --json`` run from the kit checkout at ``kit_root``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CKIT_")}
    env["PYTHONPATH"] = str(kit_root)
    done = subprocess.run(
        [sys.executable, "-m", "kit", "version", "--json"],
        cwd=kit_root, env=env, capture_output=True, text=True, timeout=120, check=True,
    )
    identity = json.loads(done.stdout)
    assert isinstance(identity, dict)
    return identity


def loosened_copy(root: Path) -> Path:
    """A copy of this kit checkout (kit/ and standards/) with the float32 tolerance loosened."""
    root.mkdir()
    subprocess.run(
        ["cp", "-r", str(CHECKOUT / "kit"), str(CHECKOUT / "standards"), str(root)], check=True
    )
    standard = root / "standards" / "v1" / "standard.yaml"
    text = standard.read_text(encoding="utf-8")
    assert "float32:  {atol: 1.0e-5, rtol: 1.0e-4}" in text
    standard.write_text(text.replace("float32:  {atol: 1.0e-5, rtol: 1.0e-4}", LOOSE), "utf-8")
    return root


def test_a_kit_with_a_loosened_tolerance_verifies_but_is_not_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    original = kit_version_json(CHECKOUT)
    loosened = kit_version_json(loosened_copy(tmp_path / "loosened"))
    assert loosened["version"] == original["version"]  # the same version string ...
    assert loosened["digest"] != original["digest"]  # ... but not the same kit
    assert original["digest"] == kit_digest()
    # The copy builds and signs a report: its digest is the copy's.
    monkeypatch.setenv("CKIT_HOME", str(tmp_path / "loosened"))
    run = sign_report(tmp_path / "signed", narrowed_report())
    assert report_json(run)["kit"]["digest"] == loosened["digest"]
    # The verifier's released list holds the original kit's digest.
    home = kit_home_releasing(tmp_path / "home", original["digest"])
    monkeypatch.setenv("CKIT_HOME", str(home))
    code, out = verify(run, capsys=capsys)
    assert code == ExitCode.OK  # integrity and consistency: the report is what it says
    assert f"note: not a released kit (kit 0.1.0, digest {loosened['digest'][:16]})" in out
    code, out = verify(run, "--require-released", capsys=capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert out.splitlines()[-2:] == [
        f"✗ released-kit: kit 0.1.0 with digest {loosened['digest'][:16]} is not a released "
        "kit: its digest is not in standards/released-kits.yaml",
        "REJECTED: 1 of 1 acceptance checks not met",
    ]
    # Whereas the released kit's own report passes the same option.
    released_run = sign_report(tmp_path / "released", narrowed_report())
    assert report_json(released_run)["kit"]["released"] is True
    code, out = verify(released_run, "--require-released", capsys=capsys)
    assert code == ExitCode.OK, out
    assert "✓ released-kit: " in out
