"""The heap of a long-lived kit child process (worker or judge): no collection while start-up
imports, then settled.

Start-up (torch, OpInfo's database, a worker's collected items) builds millions of objects that
live as long as the process; the garbage collector's full passes would walk all of them again
and again, while they are built (a fifth of the import time) and every few hundred tests after.
"""

from __future__ import annotations

import gc


def hold_collection() -> None:
    """Before start-up: no collection until ``settle_heap``."""
    gc.disable()


def settle_heap() -> None:
    """After start-up: collect start-up's garbage once, exempt what remains from every later
    pass, and collect as usual from here on (the tests' own garbage)."""
    gc.collect()
    gc.freeze()
    gc.enable()
