"""Intra-op threads of the kit's child processes: the orchestrator tells each worker and judge
its share of the cores through the environment, and each takes it as it starts."""

from __future__ import annotations

import os

from kit.host import usable_cpus

#: The variable a worker's or judge's environment carries its share in.
THREADS_VARIABLE = "CKIT_WORKER_THREADS"


def thread_share_env(slots: int) -> dict[str, str]:
    """Each slot's worker and judge compute at once (judging overlaps execution): the cores are
    shared among twice as many processes as slots; torch's default (every core, in each
    process) makes its threads wait for each other."""
    return {THREADS_VARIABLE: str(max(1, usable_cpus() // (2 * slots)))}


def take_thread_share() -> None:
    """In a worker or judge: use the share the orchestrator set (none set: torch's default)."""
    threads = os.environ.get(THREADS_VARIABLE)
    if threads:
        import torch

        torch.set_num_threads(int(threads))
