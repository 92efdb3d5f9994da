"""A run that cannot start or must not go on: a missing device, no key, a directory in use (a
container's run resumed on the host: test_devices, on its shared run; the faulty kernels:
test_repro_and_worker_logs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from runner_helpers import FIXTURES, run_ckit

pytestmark = pytest.mark.slow(seconds=40)


def test_a_missing_device_is_one_line_and_a_non_zero_exit(
    tmp_path: Path, ckit_env: dict[str, str]
) -> None:
    # One test selected: the device is enabled before any test, whatever the selection, and
    # listing and planning the whole tier would only add seconds.
    result = run_ckit(
        ["run", "--vendor", str(FIXTURES / "vendors" / "no-device"), "--tier", "unit",
         "--select", "unit/opinfo/add/float32/0", "--no-sign", "--out", str(tmp_path / "out")],
        ckit_env,
        timeout=600,
    )
    assert result.returncode == 5
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("ckit: error:")]
    assert len(error_lines) == 1
    assert "npu" in error_lines[0]
    # Nothing ran, so nothing is left: the same command runs again once the device is there,
    # instead of being refused as a run to resume.
    assert not (tmp_path / "out").exists()


def test_a_run_without_a_key_says_how_to_make_one_before_running(
    tmp_path: Path, ckit_env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    result = run_ckit(["run", "--vendor", "cpu", "--out", str(out)], ckit_env, timeout=120)
    assert result.returncode == 3
    assert "ckit keys generate --vendor cpu" in result.stderr
    assert not (out / "journal.jsonl").exists()  # nothing ran


def test_an_existing_run_directory_is_never_overwritten(
    tmp_path: Path, ckit_env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "journal.jsonl").write_text('{"kept": true}\n')
    result = run_ckit(["run", "--vendor", "cpu", "--no-sign", "--out", str(out)], ckit_env)
    assert result.returncode == 3
    assert "--resume" in result.stderr
    assert (out / "journal.jsonl").read_text() == '{"kept": true}\n'
