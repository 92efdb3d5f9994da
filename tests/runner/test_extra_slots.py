"""A second worker starts only when it repays its start-up, where cores are scarce.

On one core (this test pins ``ckit run`` there), ``--workers 2`` over a few tests keeps one
worker and says why; the pace rule itself, and a slow stretch after a fast one starting the
second worker, are checked on a real ``Progress`` advanced as a run would.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from runner_helpers import records_by_id, run_ckit

from kit.runner.extra_slots import PACE_S, PACE_TESTS, PAYOFF_S, pays_off, wait_until_paying
from kit.runner.progress import RECENT, Progress

pytestmark = pytest.mark.slow(seconds=30)


def _one_core() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def test_two_workers_asked_for_a_short_run_on_one_core_run_as_one_and_say_why(
    tmp_path: Path, ckit_env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    done = run_ckit(["run", "--vendor", "cpu", "--tier", "unit", "--select",
                     "unit/opinfo/add/*/*", "--workers", "2", "--no-sign",
                     "--out", str(out)], ckit_env, timeout=600, preexec_fn=_one_core)
    assert (out / "report.json").exists(), done.stderr[-3000:]
    assert {r["status"] for r in records_by_id(out).values()} == {"PASS"}
    assert "one worker for now: about" in done.stderr
    assert "too few to repay another worker's start-up on 1 core(s)" in done.stderr
    assert sorted(p.name for p in (out / "workers").glob("worker-*.log")) == ["worker-1.log"]


def test_the_pace_is_judged_after_enough_tests_or_time() -> None:
    progress = Progress(total=10_000, stream=open(os.devnull, "w"))  # noqa: SIM115
    assert progress.recent_remaining_s(PACE_TESTS, PACE_S) is None  # nothing ran yet
    for _ in range(PACE_TESTS - 1):
        progress.advance(failed=False)
    assert progress.recent_remaining_s(PACE_TESTS, PACE_S) is None  # too few, too soon
    time.sleep(0.01)
    progress.advance(failed=False)
    remaining = progress.recent_remaining_s(PACE_TESTS, PACE_S)
    assert remaining is not None and remaining > 0


def test_another_worker_pays_only_for_enough_work_left() -> None:
    assert not pays_off(PAYOFF_S / 2)
    assert pays_off(PAYOFF_S)
    assert pays_off(10 * PAYOFF_S)


def test_the_recent_pace_follows_a_slower_tier() -> None:
    progress = Progress(total=1_000, stream=open(os.devnull, "w"))  # noqa: SIM115
    for _ in range(RECENT):
        progress.advance(failed=False)
    fast = progress.recent_remaining_s(1, 0.0)
    for _ in range(RECENT):
        time.sleep(0.002)
        progress.advance(failed=False)
    slow = progress.recent_remaining_s(1, 0.0)
    assert fast is not None and slow is not None
    assert slow > 10 * fast


def test_a_few_slow_tests_among_fast_ones_do_not_set_the_pace() -> None:
    progress = Progress(total=10_000, stream=open(os.devnull, "w"))  # noqa: SIM115
    for index in range(RECENT):
        if index in (30, 31):  # a scale test's pair: seconds among milliseconds
            time.sleep(0.05)
        progress.advance(failed=False)
    remaining = progress.recent_remaining_s(1, 0.0)
    # By the mean, 0.1 s over 63 intervals would say about 16 s left; the median says ~0.
    assert remaining is not None and remaining < 1.0


def test_another_worker_starts_when_slow_tests_follow_fast_ones() -> None:
    progress = Progress(total=10_000, stream=open(os.devnull, "w"))  # noqa: SIM115
    for _ in range(PACE_TESTS):  # a fast tier: nothing worth a second worker
        progress.advance(failed=False)
    finished = threading.Event()

    def slow_tier() -> None:  # 20 ms a test: about 200 s left, over PAYOFF_S
        for _ in range(PACE_TESTS):
            if finished.is_set():
                return
            time.sleep(0.02)
            progress.advance(failed=False)

    runner = threading.Thread(target=slow_tier)
    runner.start()
    notes: list[str] = []
    started = wait_until_paying(progress, lambda: not runner.is_alive(), notes.append, 0.01)
    finished.set()
    runner.join()
    assert started
    assert [n.split(":")[0] for n in notes] == ["one worker for now", "another worker starts"]


def test_no_worker_starts_once_nothing_is_left() -> None:
    progress = Progress(total=10, stream=open(os.devnull, "w"))  # noqa: SIM115
    assert not wait_until_paying(progress, lambda: True, lambda _: None)


def test_slots_with_cores_of_their_own_start_at_once_and_only_those_beyond_wait() -> None:
    """Each slot asks for itself and the slots before it: 12 slots asked on 16 cores start 8 at
    once (a worker and a judge a core each), never all 12 judged scarce and run as one."""
    from kit.host import usable_cpus
    from kit.runner.extra_slots import cores_to_spare

    within = usable_cpus() // 2
    assert cores_to_spare(1)  # the first slot always has its cores (on one CPU: runs anyway)
    assert cores_to_spare(max(within, 1)) or within == 0
    assert not cores_to_spare(within + 1)
