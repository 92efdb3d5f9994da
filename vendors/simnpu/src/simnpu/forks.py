"""simnpu's fork-unsafe mode (``SIMNPU_FORK_UNSAFE=1``): a runtime like CUDA's.

A real accelerator's runtime cannot be used in a child forked after the parent used it (CUDA:
"Cannot re-initialize CUDA in forked subprocess"); PyTorch's device modules say so with
``torch.<device>._is_in_bad_fork()``. simnpu is fork-safe by default. In this mode, once a
process has used the device (named it, computed on it), a child it forks is in a bad fork:
``torch.simnpu._is_in_bad_fork()`` is True there and every device op raises (its children too).
So a caller that forks processes to use the device can be tested on simnpu as it would run on a
real one.
"""

from __future__ import annotations

import os

FORK_UNSAFE_ENV = "SIMNPU_FORK_UNSAFE"

_used = False
_in_bad_fork = False


def fork_unsafe() -> bool:
    return os.environ.get(FORK_UNSAFE_ENV) == "1"


def in_bad_fork() -> bool:
    return _in_bad_fork


def use() -> None:
    """The device is used here: raise in a bad fork, as CUDA's lazy initialization does."""
    global _used
    if _in_bad_fork:
        raise RuntimeError(
            "Cannot re-initialize simnpu in forked subprocess. To use simnpu with "
            "multiprocessing, you must use the 'spawn' start method "
            f"(simnpu's fork-unsafe mode: {FORK_UNSAFE_ENV}=1)")
    _used = True


def _after_fork_in_child() -> None:
    global _in_bad_fork
    _in_bad_fork = _in_bad_fork or (_used and fork_unsafe())


def install() -> None:
    """Watch every fork, once, at import (Python keeps at-fork hooks for the process's life);
    the mode is read at each fork, so a process may turn it on after importing simnpu."""
    os.register_at_fork(after_in_child=_after_fork_in_child)
