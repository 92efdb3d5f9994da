"""Killing the orchestrator mid-run, then ``--resume``, gives the uninterrupted run's report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_helpers import FIXTURES, run_ckit

from kit.grading import strip_timings

# Heavy: three runs with a hang each (a minute and a half); `make test-heavy` runs it in CI.
pytestmark = [pytest.mark.slow(seconds=110), pytest.mark.heavy]

FAULTY = str(FIXTURES / "vendors" / "faulty")
# Sorted order: add, exp (wrong), sigmoid (segfault), tanh (hangs until the timeout), where.
SELECT = ["unit/opinfo/add/float32/?", "unit/opinfo/exp/float32/0",
          "unit/opinfo/sigmoid/float32/0", "unit/opinfo/tanh/float32/0",
          "unit/opinfo/where/float32/?"]


def _run_args(out: Path) -> list[str]:
    selection = [arg for pattern in SELECT for arg in ("--select", pattern)]
    return ["run", "--vendor", FAULTY, "--tier", "unit", *selection, "--timeout", "10",
            "--no-sign", "--out", str(out)]


def _journaled_ids(out: Path) -> set[str]:
    journal = out / "journal.jsonl"
    if not journal.exists():
        return set()
    ids = set()
    for line in journal.read_text().splitlines():
        try:
            ids.add(json.loads(line)["id"])
        except ValueError:
            pass
    return ids


def _comparable(out: Path) -> dict[str, object]:
    return strip_timings(json.loads((out / "report.json").read_text()))


def test_resume_after_killing_the_orchestrator_loses_no_finished_test(
    tmp_path: Path, ckit_env: dict[str, str]
) -> None:
    reference = tmp_path / "uninterrupted"
    assert run_ckit(_run_args(reference), ckit_env, timeout=600).returncode == 1

    interrupted = tmp_path / "interrupted"
    process = subprocess.Popen(
        [sys.executable, "-m", "kit", *_run_args(interrupted)],
        env=ckit_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    # Kill once the crash is journaled: the hanging test is then in flight.
    while "unit/opinfo/sigmoid/float32/0" not in _journaled_ids(interrupted):
        assert process.poll() is None, "the run finished before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.1)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    finished_before_kill = _journaled_ids(interrupted)
    assert "unit/opinfo/tanh/float32/0" not in finished_before_kill
    assert not (interrupted / "report.json").exists()

    resumed = run_ckit(["run", "--resume", str(interrupted)], ckit_env, timeout=600)
    assert resumed.returncode == 1, resumed.stderr
    assert finished_before_kill <= _journaled_ids(interrupted)
    assert _comparable(interrupted) == _comparable(reference)
