"""The worker runs ahead of its judge (up to ``JUDGED_SLOTS`` tests): what a failure voids.

When the judge fails a test, every test the worker ran after it ran on a device nobody had
probed yet: however many the judge held by then (that depends on the machine's speed), each
must run again after the probe, and only that run counts. The counting vendor's float32 exp
is wrong and its neg kernel logs each call with the test the worker was running
(tests/fixtures/vendors/counting): the neg tests after the failing exp test that ran before the
probe are the first ones, at most ``JUDGED_SLOTS``, and after the probe every neg test runs
once, in order.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from runner_helpers import FIXTURES, records_by_id, run_ckit

from kit.rundir import JUDGED_SLOTS

pytestmark = pytest.mark.slow(seconds=60)

COUNTING = str(FIXTURES / "vendors" / "counting")
ADD, EXP = "unit/opinfo/add/float32/0", "unit/opinfo/exp/float32/0"
#: Tests calling neg, after exp in the run's (sorted) order, each passing (a failing one would
#: void those after it: its own voided count would vary with the machine's speed).
NEGS = [f"unit/opinfo/neg/float32/{sample}" for sample in (
    "0", "backward-0", "empty", "expanded", "inplace", "inplacebackward-0", "inplacestrided",
    "method", "noncontiguous", "out", "outresize", "special")]


def _run(tmp_path: Path, env: dict[str, str], name: str, selects: list[str]
         ) -> tuple[dict[str, str], list[list[str]]]:
    """Statuses by id, and the kernels' call log: ``[op, pid, "test" or "probe"]`` lines."""
    calls, out = tmp_path / f"{name}.log", tmp_path / name
    args = ["run", "--vendor", COUNTING, "--tier", "unit", "--no-sign", "--out", str(out)]
    for pattern in selects:
        args += ["--select", pattern]
    done = run_ckit(args, {**env, "CKIT_CALL_LOG": str(calls)}, timeout=600)
    assert (out / "report.json").exists(), done.stderr[-3000:]
    statuses = {i: r["status"] for i, r in records_by_id(out).items()}
    return statuses, [line.split() for line in calls.read_text().splitlines()]


def _executions(lines: list[list[str]]) -> list[tuple[str, int]]:
    """The worker's test executions in order, as (test id, its first call's line): one per
    unbroken stretch of calls made for that test (the probe's calls break a stretch)."""
    runs: list[tuple[str, int]] = []
    current = None
    for index, (_, _, caller, test_id) in enumerate(lines):
        if caller == "probe" or test_id == "-":
            current = None
        elif test_id != current:
            runs.append((test_id, index))
            current = test_id
    return runs


def test_every_test_run_before_a_failing_verdict_runs_again_after_the_probe(
    tmp_path: Path, ckit_env: dict[str, str]
) -> None:
    statuses, lines = _run(tmp_path, ckit_env, "failing", [ADD, EXP, *NEGS])
    assert statuses == {ADD: "PASS", EXP: "FAIL_NUMERIC", **dict.fromkeys(NEGS, "PASS")}
    probes = [i for i, (_, _, caller, _) in enumerate(lines) if caller == "probe"]
    assert probes, lines
    runs = _executions(lines)
    exp_runs = [i for test_id, i in runs if test_id == EXP]
    assert len(exp_runs) == 1 and exp_runs[0] < probes[0], runs
    # Run while exp was judged, before its verdict: void. The worker ran at most as many as
    # the judge may hold (exp, the tests queued behind it, and the one it was running).
    voided = [test_id for test_id, i in runs if exp_runs[0] < i < probes[0]]
    # Only the tests calling aten's neg itself log (not neg_ or neg.out): those are seen.
    seen = [test_id for test_id in NEGS if any(test_id == line[3] for line in lines)]
    assert len(seen) >= 6, lines
    assert 1 <= len(voided) <= JUDGED_SLOTS, runs
    assert voided == seen[:len(voided)], runs
    # After the probe each neg test ran once, in order: the voided ones again, then the rest.
    assert [test_id for test_id, i in runs if i > probes[-1]] == seen, runs
