"""The judge judges a test while the worker runs the next; what a failure changes.

Without overlap, a failing test is followed by the health probe (and maybe a new worker)
before the worker runs anything else. With overlap the next test has already run when the
verdict comes: its result is kept after a pass and thrown away after a failure, the test
running again after the probe. A vendor whose float32 exp is wrong and whose neg kernel
counts its calls (tests/fixtures/vendors/counting) shows which happened.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from runner_helpers import FIXTURES, records_by_id, run_ckit

pytestmark = pytest.mark.slow(seconds=40)

COUNTING = str(FIXTURES / "vendors" / "counting")
NEG = "unit/opinfo/neg/float32/0"


def _neg_calls_after(predecessor: str, tmp_path: Path, ckit_env: dict[str, str]
                     ) -> tuple[dict[str, str], list[str]]:
    """Run ``predecessor`` then NEG (ids run in sorted order): the statuses, and the process
    of each neg call the test made (the health probe's are left out)."""
    calls = tmp_path / "calls.log"
    out = tmp_path / "out"
    assert predecessor < NEG  # planned first
    done = run_ckit(["run", "--vendor", COUNTING, "--tier", "unit", "--select", predecessor,
                     "--select", NEG, "--no-sign", "--out", str(out)],
                    {**ckit_env, "CKIT_CALL_LOG": str(calls)}, timeout=600)
    assert (out / "report.json").exists(), done.stderr[-3000:]
    statuses = {i: r["status"] for i, r in records_by_id(out).items()}
    lines = [line.split() for line in calls.read_text().splitlines()]
    return statuses, [pid for _, pid, caller in lines if caller == "test"]


def test_the_test_after_a_failing_one_runs_again_and_after_a_passing_one_once(
    tmp_path: Path, ckit_env: dict[str, str]
) -> None:
    passed, once = _neg_calls_after("unit/opinfo/add/float32/0", tmp_path / "a", ckit_env)
    assert passed == {"unit/opinfo/add/float32/0": "PASS", NEG: "PASS"}
    assert once, "the counting neg kernel never ran"
    failed, twice = _neg_calls_after("unit/opinfo/exp/float32/0", tmp_path / "b", ckit_env)
    assert failed == {"unit/opinfo/exp/float32/0": "FAIL_NUMERIC", NEG: "PASS"}
    # Ran beside exp's judging, then again after exp's verdict and probe: the first result
    # was not kept (one record), the worker ran the test twice.
    assert len(twice) == 2 * len(once), (once, twice)
    assert str(os.getpid()) not in twice  # the worker's calls
