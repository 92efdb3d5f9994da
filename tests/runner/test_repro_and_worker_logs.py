"""What a failing record keeps, read from the suite's shared faulty simnpu run
(``simnpu_faults_out``; the classification of each fault: ``test_simnpu_fault_classification``):
each failing unit record says how to reproduce it (issue 10), and a CRASH or TIMEOUT record
names the worker log holding its stack and keeps its last lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from runner_helpers import FAULTY_RUN
from test_simnpu_fault_classification import CONTROLS, TABLE

from kit import paths

pytestmark = pytest.mark.slow(seconds=100)


def _test_of(kind: str) -> str:
    """The test of the classification table's op broken by ``kind``."""
    return next(f"unit/opinfo/{op}/float32/0" for k, op, _ in TABLE if k == kind)


CRASHES, HANGS, WRONG = _test_of("segfault"), _test_of("hang"), _test_of("wrong_large")


def test_the_faulty_run_writes_every_report_file(simnpu_faults_out: Path) -> None:
    for name in ("report.dsse.json", "junit.xml", "results.csv", "summary.md"):
        assert (simnpu_faults_out / name).exists()


def test_failing_unit_record_holds_inputs_seed_and_the_pytest_command(
    simnpu_faults_run: dict[str, dict[str, Any]],
) -> None:
    repro = simnpu_faults_run[WRONG]["details"]["repro"]
    assert repro["pytest"] == (
        f"python -m pytest kit/tiers/unit --ckit-vendor=simnpu --ckit-select={WRONG}"
    )
    assert isinstance(repro["seed"], int)
    tensors = [a for a in repro["inputs"]["args"] if isinstance(a, dict)]
    assert tensors, repro
    for tensor in tensors:
        assert tensor["dtype"] == "float32"
        assert len(tensor["shape"]) == len(tensor["stride"])
    # Only failures carry one (under load a test may fail where it passes alone).
    for record in simnpu_faults_run.values():
        failed = record["status"] not in ("PASS", "SKIPPED", "NOT_APPLICABLE")
        assert ("repro" in record["details"]) == failed, record["id"]
    assert not any("repro" in simnpu_faults_run[f"unit/opinfo/{op}/float32/0"]["details"]
                   for op in CONTROLS)


def test_the_recorded_pytest_command_reproduces_the_failure_alone(
    simnpu_faults_run: dict[str, dict[str, Any]],
) -> None:
    command = simnpu_faults_run[WRONG]["details"]["repro"]["pytest"].split()
    assert command[0] == "python"
    # The vendor's environment, as on the run: here, simnpu's fault rules.
    env = {**os.environ, "SIMNPU_FAULTS": json.dumps(FAULTY_RUN.faults())}
    done = subprocess.run(
        [sys.executable, *command[1:], "-q", "-p", "no:cacheprovider"],
        cwd=paths.package_dir().parent, env=env, capture_output=True, text=True, timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stdout[-2000:]
    assert "1 failed" in done.stdout.splitlines()[-1]
    assert WRONG.removeprefix("unit/opinfo/") in done.stdout


def test_crash_record_names_its_worker_log_and_keeps_the_stack(
    simnpu_faults_out: Path, simnpu_faults_run: dict[str, dict[str, Any]],
) -> None:
    crash = simnpu_faults_run[CRASHES]
    assert crash["status"] == "CRASH"
    log = crash["details"]["worker_log"]
    assert log.startswith("workers/worker-") and (simnpu_faults_out / log).is_file()
    tail = crash["details"]["worker_log_tail"]
    # From faulthandler's dump on: the signal, then the innermost frames first.
    assert tail[0] == "Fatal Python error: Segmentation fault", tail
    assert any("_segfault" in line for line in tail[:10]), tail
    assert all(len(line) <= 300 and line.isprintable() for line in tail)
    assert "repro" in crash["details"]


def test_timeout_record_names_its_worker_log(
    simnpu_faults_out: Path, simnpu_faults_run: dict[str, dict[str, Any]],
) -> None:
    hang = simnpu_faults_run[HANGS]
    assert hang["status"] == "TIMEOUT"
    assert (simnpu_faults_out / hang["details"]["worker_log"]).is_file()
    assert isinstance(hang["details"]["worker_log_tail"], list)
