"""``make certify-run`` (what ``make certify`` runs after installing and making keys): a fresh
directory per run, the signed report verified whatever the grade, the run's exit code kept.

Narrowed to one test so it runs in seconds; the kit is the checkout under test (``CKIT``), the
keyring a temporary one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kit.cli import main
from kit.errors import ExitCode

REPO = Path(__file__).resolve().parents[2]
NARROW = "--tier unit --select unit/opinfo/add/float32/0"

pytestmark = [pytest.mark.slow(seconds=50),
              pytest.mark.skipif(shutil.which("make") is None, reason="needs make")]


def _certify(cwd: Path, keyring: Path, *variables: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [
        "make", "--no-print-directory", "-f", str(REPO / "Makefile"), "certify-run",
        "VENDOR=cpu", f"CKIT={sys.executable} -m kit", f"KEYRING={keyring}",
        f"CERTIFY_ARGS={NARROW}", *variables,
    ]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def test_a_second_certify_gets_its_own_directory_and_every_run_is_verified(
    tmp_path: Path,
) -> None:
    keyring = tmp_path / "keyring"
    assert main(["keys", "generate", "--vendor", "cpu", "--keyring", str(keyring)]) == 0
    code = int(ExitCode.PARTIAL)  # a narrowed run whose one test passes
    runs = [_certify(tmp_path, keyring) for _ in range(2)]
    made = sorted((tmp_path / "results" / "cpu").iterdir())
    assert len(made) == 2
    for run, out_dir in zip(runs, made, strict=True):
        assert run.returncode != 0, run.stdout + run.stderr  # make's own: 2, for any failure
        assert "OK: cpu report signed by" in run.stdout  # verified though not conformant
        assert f"certify: results/cpu/{out_dir.name} (ckit run exit code {code})" in run.stdout
        assert f"Error {code}" in run.stderr
        assert (out_dir / "report.dsse.json").is_file()


def test_certify_into_a_named_out_dir_that_holds_a_run_stops_without_verifying(
    tmp_path: Path,
) -> None:
    keyring = tmp_path / "keyring"
    assert main(["keys", "generate", "--vendor", "cpu", "--keyring", str(keyring)]) == 0
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "report.json").write_text("{}")
    run = _certify(tmp_path, keyring, "OUT=taken")
    assert "ckit: error: " in run.stderr and "is not empty" in run.stderr
    assert "OK:" not in run.stdout
    code = int(ExitCode.INPUT_ERROR)
    assert f"(ckit run exit code {code})" in run.stdout and f"Error {code}" in run.stderr
