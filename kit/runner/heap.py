"""The heap of a long-lived kit child process (worker, fork server or judge): no collection
while start-up imports, then settled; at the end, left to the kernel.

Start-up (torch, OpInfo's database, a worker's collected items) builds millions of objects that
live as long as the process; the garbage collector's full passes would walk all of them again
and again, while they are built (a fifth of the import time) and every few hundred tests after,
and the interpreter's shutdown would free them one by one (2 s of CPU per process, every run).
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from typing import NoReturn


def hold_collection() -> None:
    """Before start-up: no collection until ``settle_heap``."""
    gc.disable()


def settle_heap() -> None:
    """After start-up: collect start-up's garbage once, exempt what remains from every later
    pass, and collect as usual from here on (the tests' own garbage)."""
    gc.collect()
    gc.freeze()
    gc.enable()


def end_process(code: int) -> NoReturn:
    """End this process with ``code`` as the interpreter would, less the freeing of its heap:
    exit handlers run (logging's shutdown, ``faulthandler``'s file) and the standard streams are
    flushed; every file the kit writes is closed where it is written."""
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)
