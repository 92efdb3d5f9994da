"""Whether a run's second and later slots start: at once where the cores are there for them,
else only when the run's own pace says they repay their start-up.

A slot's start is a worker and a judge importing torch (and the worker collecting the tests):
about 10 s of CPU. Where the cores are scarce it is taken from the slot already running, so a
second worker slows a short run down (2 cores: 1,029 unit tests took 15.3 s with one worker
and 18.8-19.9 s with two) and speeds a long one up (the whole unit tier, 1.27x with two).
"""

from __future__ import annotations

from kit.runner.threads import usable_cores

#: The first slot's pace is judged after this many of its records, or this many seconds.
PACE_TESTS = 64
PACE_S = 5.0
#: What must be left, in seconds at one slot's pace, for another slot to pay on scarce cores:
#: its start costs one slot about 7 s of wall on 2 cores, and two slots finish the rest in
#: about two thirds of the time (one slot's worker and judge already keep 1.3 cores busy).
PAYOFF_S = 30.0


def cores_to_spare(workers: int) -> bool:
    """Whether every slot's worker and judge get a core of their own."""
    return usable_cores() >= 2 * workers


def pays_off(remaining_s: float) -> bool:
    return remaining_s >= PAYOFF_S
