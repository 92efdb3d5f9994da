"""``ckit verify``, ``ckit sign`` and ``ckit show`` on a ``body``-format run directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from body_helpers import signed_body  # noqa: E402

from kit.errors import ExitCode  # noqa: E402
from kit.rundir import RECORDS_JSONL  # noqa: E402

KIT_ROOT = Path(__file__).resolve().parents[2]


def ckit(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(KIT_ROOT)}
    return subprocess.run([sys.executable, "-m", "kit", *args], cwd=KIT_ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.usefixtures("private_config")
def test_verify_records_the_content_verdict_and_refuses_a_body_swapped_since(tmp_path: Path
                                                                            ) -> None:
    signed = signed_body(tmp_path)
    verdicts = tmp_path / "verdicts"
    for _ in range(2):  # checked, then read back
        done = ckit("verify", str(signed.envelope), "--keyring", str(signed.keyring),
                    "--content-cache", str(verdicts))
        assert done.returncode == ExitCode.OK, done.stderr
        assert done.stdout.startswith("OK: acme report signed by ")
    assert len(list(verdicts.rglob("*.json"))) == 1
    shown = ckit("show", str(signed.run_dir))
    assert shown.returncode == ExitCode.OK, shown.stderr
    path = signed.run_dir / RECORDS_JSONL
    path.write_bytes(path.read_bytes().replace(b'"PASS"', b'"FAIL_NUMERIC"', 1))
    done = ckit("verify", str(signed.envelope), "--keyring", str(signed.keyring),
                "--content-cache", str(verdicts))
    assert done.returncode == ExitCode.VERIFICATION_FAILED
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("ckit: error: step 7: records.jsonl was modified after signing")


@pytest.mark.usefixtures("private_config")
def test_render_writes_the_derived_files_of_a_body_and_never_over_others(tmp_path: Path
                                                                         ) -> None:
    signed = signed_body(tmp_path)
    done = ckit("render", str(signed.run_dir), "--out", str(tmp_path / "views"))
    assert done.returncode == ExitCode.OK, done.stderr
    assert sorted(p.name for p in (tmp_path / "views").iterdir()) == [
        "junit.xml", "results.csv", "summary.md"]
    again = ckit("render", str(signed.run_dir), "--out", str(tmp_path / "views"))
    assert again.returncode == ExitCode.INPUT_ERROR
    assert "already holds junit.xml" in again.stderr
