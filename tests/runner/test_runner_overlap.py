"""The judge judges a test while the worker runs the next; what a failure changes.

Without overlap, a failing test is followed by the health probe (and maybe a new worker)
before the worker runs anything else. With overlap the next test has already run when the
verdict comes: its result is kept after a pass and thrown away after a failure, the test
running again after the probe. A vendor whose float32 exp is wrong and whose exp and neg
kernels log their calls (tests/fixtures/vendors/counting) shows which happened.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from runner_helpers import FIXTURES, records_by_id, run_ckit

pytestmark = pytest.mark.slow(seconds=30)

COUNTING = str(FIXTURES / "vendors" / "counting")
# Run in this (sorted) order: exp runs while add is judged, neg while exp is judged, and sub
# after neg: the judge holds neg behind exp, so neg's dropped verdict must not be taken for
# a later test's.
ADD, EXP, NEG, SUB = ("unit/opinfo/add/float32/0", "unit/opinfo/exp/float32/0",
                      "unit/opinfo/neg/float32/0", "unit/opinfo/sub/float32/0")


def _executions(lines: list[list[str]], op: str) -> int:
    """How many times the worker ran ``op``'s test: its calls come in one unbroken stretch
    per execution, and the probe after exp's failure (whose calls are marked) calls neg in
    between neg's two executions."""
    callers = [caller for name, _, caller, _ in lines if name == op]
    return sum(1 for caller, _ in itertools.groupby(callers) if caller == "test")


def test_the_test_after_a_failing_one_runs_again_and_after_a_passing_one_once(
    tmp_path: Path, ckit_env: dict[str, str]
) -> None:
    calls, out = tmp_path / "calls.log", tmp_path / "out"
    done = run_ckit(["run", "--vendor", COUNTING, "--tier", "unit", "--select", ADD,
                     "--select", EXP, "--select", NEG, "--select", SUB, "--no-sign",
                     "--out", str(out)],
                    {**ckit_env, "CKIT_CALL_LOG": str(calls)}, timeout=600)
    assert (out / "report.json").exists(), done.stderr[-3000:]
    statuses = {i: r["status"] for i, r in records_by_id(out).items()}
    assert statuses == {ADD: "PASS", EXP: "FAIL_NUMERIC", NEG: "PASS", SUB: "PASS"}
    lines = [line.split() for line in calls.read_text().splitlines()]
    assert str(os.getpid()) not in {pid for _, pid, _, _ in lines}  # the worker's calls
    # exp ran beside add's judging and add passed: kept, run once.
    assert _executions(lines, "exp") == 1, lines
    # neg ran beside exp's judging, exp failed: run again after the probe, one record.
    assert _executions(lines, "neg") == 2, lines
