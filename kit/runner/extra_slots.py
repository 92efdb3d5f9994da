"""Whether a run's second and later slots start: at once where the cores are there for them,
else only when the run's own pace says they repay their start-up.

A slot's start is a worker and a judge importing torch (and the worker collecting the tests):
about 10 s of CPU. Where the cores are scarce it is taken from the slot already running, so a
second worker slows a short run down (2 cores: 1,029 unit tests took 15.3 s with one worker
and 18.8-19.9 s with two).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from kit.host import usable_cpus
from kit.runner.progress import Progress

#: The running slot's pace is first judged after this many records, or this many seconds.
PACE_TESTS = 64
PACE_S = 5.0
#: What must be left, in seconds at the running slot's recent pace, for another slot to pay
#: on scarce cores. One slot, its judge overlapping its worker, keeps about 1.4 of 2 cores busy
#: on the unit tier, so a second slot there gains little and its start-up (about 10 s of CPU
#: on 2 cores) and the contention of four processes cost more: the whole unit tier (about a
#: minute) ran 0.94x as fast with two. A tier of seconds a test (models, flows) leaves a core
#: idle while its worker computes: there a second worker pays, and minutes are left.
PAYOFF_S = 90.0


def cores_to_spare(slots: int) -> bool:
    """Whether the first ``slots`` slots' workers and judges each get a core of their own: a
    slot within them starts at once, one beyond waits until it pays (12 slots asked on 16
    cores: 8 at once; all 12 once taken as scarce, an H200 host's whole unit tier ran on one
    worker)."""
    return usable_cpus() >= 2 * slots


def pays_off(remaining_s: float) -> bool:
    return remaining_s >= PAYOFF_S


def wait_until_paying(
    progress: Progress,
    done: Callable[[], bool],
    note: Callable[[str], None],
    poll_s: float = 0.2,
) -> bool:
    """Whether another slot should start: True as soon as the recent pace says the tests left
    repay it (checked as the run goes: a slow tier after a fast one makes it pay), False once
    ``done`` (nothing left to run, or the run stopped). ``note`` says why one slot runs alone,
    once, and if another starts after all."""
    told = False
    while not done():
        remaining = progress.recent_remaining_s(PACE_TESTS, PACE_S)
        if remaining is not None and pays_off(remaining):
            if told:
                note(f"another worker starts: about {remaining:.0f} s of tests remain at the "
                     "recent pace")
            return True
        if remaining is not None and not told:
            note(f"one worker for now: about {remaining:.0f} s of tests remain at its pace, "
                 f"too few to repay another worker's start-up on {usable_cpus()} core(s)")
            told = True
        time.sleep(poll_s)
    return False
