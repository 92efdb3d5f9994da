"""A segfaulting, a hanging and a wrong kernel in a test vendor: the run classifies and goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner_helpers import FIXTURES, records_by_id, run_ckit

from kit.errors import ExitCode

pytestmark = pytest.mark.slow(seconds=90)

FAULTY = str(FIXTURES / "vendors" / "faulty")
SELECTED = [
    "unit/opinfo/add/float32/0",
    "unit/opinfo/exp/float32/0",
    "unit/opinfo/sigmoid/float32/0",
    "unit/opinfo/tanh/float32/0",
    "unit/opinfo/where/float32/0",
]


def _selection() -> list[str]:
    return [arg for test_id in SELECTED for arg in ("--select", test_id)]


def test_crash_hang_and_wrong_value_are_classified_and_the_run_completes(
    tmp_path: Path, ckit_env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    result = run_ckit(
        ["run", "--vendor", FAULTY, "--tier", "unit", *_selection(), "--timeout", "15",
         "--no-sign", "--out", str(out)],
        ckit_env,
        timeout=600,
    )
    assert result.returncode == 1, result.stderr  # finished, graded non-conformant
    records = records_by_id(out)
    assert set(records) == set(SELECTED)
    assert records["unit/opinfo/sigmoid/float32/0"]["status"] == "CRASH"
    assert records["unit/opinfo/sigmoid/float32/0"]["details"]["signal"] == "SIGSEGV"
    assert records["unit/opinfo/tanh/float32/0"]["status"] == "TIMEOUT"
    wrong = records["unit/opinfo/exp/float32/0"]
    assert wrong["status"] == "FAIL_NUMERIC"
    assert wrong["details"]["max_rel_err"] > 0.4  # the kernel is 50% off
    assert wrong["details"]["mismatched"] > 0
    # Tests after the crash and the hang ran on fresh workers and passed.
    assert records["unit/opinfo/add/float32/0"]["status"] == "PASS"
    assert records["unit/opinfo/where/float32/0"]["status"] == "PASS"
    assert (out / "report.dsse.json").exists()
    for name in ("junit.xml", "results.csv", "summary.md"):
        assert (out / name).exists()


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
