"""A segfaulting, a hanging and a wrong kernel in a test vendor (one run): the run classifies
each and goes on; each failing unit record says how to reproduce it (issue 10), and a CRASH or
TIMEOUT record names the worker log holding its stack and keeps its last lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from runner_helpers import FIXTURES, records_by_id, run_ckit

from kit import paths

pytestmark = pytest.mark.slow(seconds=70)

FAULTY = str(FIXTURES / "vendors" / "faulty")
CRASHES, HANGS, WRONG, PASSES, PASSES_LAST = (
    "unit/opinfo/sigmoid/float32/0",
    "unit/opinfo/tanh/float32/0",
    "unit/opinfo/exp/float32/0",
    "unit/opinfo/add/float32/0",
    "unit/opinfo/where/float32/0",
)
TESTS = (CRASHES, HANGS, WRONG, PASSES, PASSES_LAST)


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("faulty")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FIXTURES / "python"), *filter(None, [env.get("PYTHONPATH")])]
    )
    env["XDG_CONFIG_HOME"] = str(tmp / "config")
    out = tmp / "out"
    selection = [arg for test_id in TESTS for arg in ("--select", test_id)]
    result = run_ckit(
        ["run", "--vendor", FAULTY, "--tier", "unit", *selection, "--timeout", "10",
         "--no-sign", "--out", str(out)],
        env,
        timeout=600,
    )
    assert result.returncode == 1, result.stderr
    return out, records_by_id(out)


def test_crash_hang_and_wrong_value_are_classified_and_the_run_completes(
    faulty_run: tuple[Path, dict[str, Any]],
) -> None:
    out, records = faulty_run
    assert set(records) == set(TESTS)
    assert records[CRASHES]["status"] == "CRASH"
    assert records[CRASHES]["details"]["signal"] == "SIGSEGV"
    assert records[HANGS]["status"] == "TIMEOUT"
    wrong = records[WRONG]
    assert wrong["status"] == "FAIL_NUMERIC"
    assert wrong["details"]["max_rel_err"] > 0.4  # the kernel is 50% off
    assert wrong["details"]["mismatched"] > 0
    # Tests after the crash and the hang ran on fresh workers and passed.
    assert records[PASSES]["status"] == "PASS"
    assert records[PASSES_LAST]["status"] == "PASS"
    for name in ("report.dsse.json", "junit.xml", "results.csv", "summary.md"):
        assert (out / name).exists()


def test_failing_unit_record_holds_inputs_seed_and_the_pytest_command(
    faulty_run: tuple[Path, dict[str, Any]],
) -> None:
    _, records = faulty_run
    repro = records[WRONG]["details"]["repro"]
    assert repro["pytest"] == (
        f"python -m pytest kit/tiers/unit --ckit-vendor={FAULTY} --ckit-select={WRONG}"
    )
    assert isinstance(repro["seed"], int)
    tensors = [a for a in repro["inputs"]["args"] if isinstance(a, dict)]
    assert tensors, repro
    for tensor in tensors:
        assert tensor["dtype"] == "float32"
        assert len(tensor["shape"]) == len(tensor["stride"])
    # Only failures carry one (under load a test may fail where it passes alone).
    for record in records.values():
        failed = record["status"] not in ("PASS", "SKIPPED", "NOT_APPLICABLE")
        assert ("repro" in record["details"]) == failed, record["id"]


def test_the_recorded_pytest_command_reproduces_the_failure_alone(
    faulty_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    _, records = faulty_run
    command = records[WRONG]["details"]["repro"]["pytest"].split()
    assert command[0] == "python"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FIXTURES / "python"), *filter(None, [env.get("PYTHONPATH")])]
    )
    done = subprocess.run(
        [sys.executable, *command[1:], "-q", "-p", "no:cacheprovider"],
        cwd=paths.package_dir().parent, env=env, capture_output=True, text=True, timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stdout[-2000:]
    assert "1 failed" in done.stdout.splitlines()[-1]
    assert "exp/float32/0" in done.stdout


def test_crash_record_names_its_worker_log_and_keeps_the_stack(
    faulty_run: tuple[Path, dict[str, Any]],
) -> None:
    out, records = faulty_run
    crash = records[CRASHES]
    assert crash["status"] == "CRASH"
    log = crash["details"]["worker_log"]
    assert log.startswith("workers/worker-") and (out / log).is_file()
    tail = crash["details"]["worker_log_tail"]
    # From faulthandler's dump on: the signal, then the innermost frames first.
    assert tail[0] == "Fatal Python error: Segmentation fault", tail
    assert any("_segfaulting_sigmoid" in line for line in tail[:10]), tail
    assert all(len(line) <= 300 and line.isprintable() for line in tail)
    assert "repro" in crash["details"]


def test_timeout_record_names_its_worker_log(faulty_run: tuple[Path, dict[str, Any]]) -> None:
    out, records = faulty_run
    hang = records[HANGS]
    assert hang["status"] == "TIMEOUT"
    assert (out / hang["details"]["worker_log"]).is_file()
    assert isinstance(hang["details"]["worker_log_tail"], list)
