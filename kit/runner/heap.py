"""The heap of a long-lived kit child process (worker or judge), settled after start-up."""

from __future__ import annotations

import gc


def settle_heap() -> None:
    """Exempt what start-up built (torch, OpInfo's database, a worker's collected items:
    millions of objects that live as long as the process) from the garbage collector, whose
    full passes would otherwise walk all of it again every few hundred tests and at exit."""
    gc.collect()
    gc.freeze()
