"""A run that cannot start or must not go on: a missing device, no key, a directory in use, a
container's run resumed on the host (the faulty kernels: test_repro_and_worker_logs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner_helpers import FIXTURES, run_ckit

from kit.errors import ExitCode

pytestmark = pytest.mark.slow(seconds=40)


def test_a_missing_device_is_one_line_and_a_non_zero_exit(
    tmp_path: Path, ckit_env: dict[str, str]
) -> None:
    result = run_ckit(
        ["run", "--vendor", str(FIXTURES / "vendors" / "no-device"), "--tier", "unit",
         "--no-sign", "--out", str(tmp_path / "out")],
        ckit_env,
        timeout=600,
    )
    assert result.returncode == 5
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("ckit: error:")]
    assert len(error_lines) == 1
    assert "npu" in error_lines[0]


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


def test_a_run_begun_in_a_container_is_not_resumed_on_the_host(
    tmp_path: Path, ckit_env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    identity = {"image": "ckit/debian12-cpu:0.1.0", "image_id": "sha256:" + "0" * 64,
                "base": "ckit/debian12-base:bookworm", "os": "debian12"}
    in_container = {**ckit_env, "CKIT_CONTAINER": json.dumps(identity)}
    began = run_ckit(["run", "--vendor", "cpu", "--tier", "unit", "--select",
                      "unit/opinfo/add/float32/0", "--no-sign", "--out", str(out)], in_container,
                     timeout=600)
    assert began.returncode == ExitCode.PARTIAL, began.stderr  # narrowed run, finished
    resumed = run_ckit(["run", "--resume", str(out)], ckit_env, timeout=600)
    assert resumed.returncode == 3
    assert "started inside a reference container" in resumed.stderr
