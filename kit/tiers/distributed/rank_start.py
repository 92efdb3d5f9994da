"""How a worker starts a test's ranks: forked from itself where the device's runtime survives a
fork, else forked from a fresh interpreter that has never used the device.

A fork of the worker costs nothing of torch's start (it has imported torch and the vendor's
modules). But a real accelerator's runtime cannot be used in a child forked after the parent
used it (CUDA: "Cannot re-initialize CUDA in forked subprocess"; ROCm, XPU and Ascend's alike),
and the worker has used it: it named the device at its start (``kit.device.probe_device``).
PyTorch's device modules say so in such a child, ``torch.<device>._is_in_bad_fork()``: the
worker asks it of one throwaway forked child, on any runtime, and keeps a bad answer (it
cannot change back). Where the answer is yes, ranks come from ``multiprocessing``'s fork server, a
fresh interpreter the worker starts once, which imports what the tier's ranks import
(``RANK_IMPORTS``: torch's and the kit's, never the vendor's modules, which may initialize the
runtime) and forks each rank; the rank imports the vendor's modules and enables the device as
its worker did. So a rank costs a fork either way, not an interpreter's start (seconds each).
The server dies with its worker (``kit.tiers.distributed.rank_server``), and its ranks with it.

Autograd refuses the same way, whatever the device: a child forked after its engine started
threads in the parent (a device's backward threads, or a reentrant backward's pool) cannot run
a backward ("Unable to handle autograd's threading in combination with fork-based
multiprocessing"), and a DDP step's ranks run one. Any earlier test of the worker can start
them, so the throwaway child also runs a one-element backward, and only a bad fork is kept.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
from dataclasses import dataclass
from multiprocessing.context import ForkContext, ForkServerContext
from typing import Final

from kit.vendors import VendorProfile

#: The two ways a rank starts (``multiprocessing``'s start methods by those names), as
#: ``details.rank_start`` records them.
FORK: Final = "fork"
FORKSERVER: Final = "forkserver"

#: What the ranks import beyond torch: DDP imports torch._dynamo on first use, a wrapper
#: subclass's first copy under a process group torch.distributed.tensor (seconds each). Where
#: ranks come from the fork server, it imports them once (and the tier's preloads: the run's
#: fork server, once for its workers), so no rank pays them.
RANK_IMPORTS = ("torch.distributed", "torch.distributed.tensor", "torch.nn.parallel",
                "torch._dynamo", "kit.tiers.distributed.cases")
#: Per device type, the fork server once a forked child could not run ranks (for good).
_DECIDED: dict[str, str] = {}
#: Imported by the fork server before ``RANK_IMPORTS``: it dies with its worker.
_SERVER_GUARD = "kit.tiers.distributed.rank_server"
#: ``prctl(PR_SET_PDEATHSIG)``: the process is killed when the one that started it dies.
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Linux: be killed (SIGKILL) when the process that started this one dies."""
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass(frozen=True)
class RankStart:
    """How a test's ranks start, and the vendor whose device a rank from the fork server
    enables."""

    method: str
    vendor: VendorProfile

    def context(self) -> ForkContext | ForkServerContext:
        if self.method == FORK:
            return multiprocessing.get_context(FORK)
        context = multiprocessing.get_context(FORKSERVER)
        context.set_forkserver_preload([_SERVER_GUARD, *RANK_IMPORTS])
        return context

    def worker_died(self, worker: int) -> bool:
        """In a rank, once it asked for its parent's death signal: whether the worker died
        before (the signal then never comes). A rank from the fork server, whose parent is the
        server, asks the pipe the worker holds open to it."""
        if self.method == FORK:
            return os.getppid() != worker
        parent = multiprocessing.parent_process()
        return parent is None or not parent.is_alive()

    def enable_device(self) -> None:
        """In a rank, before its job: one from the fork server enables the vendor's device as
        its worker did at its start (the vendor's modules imported, the worker's device
        selected); one forked from the worker has it already."""
        if self.method == FORKSERVER:
            from kit.device import enable_device

            enable_device(self.vendor)


def rank_start(vendor: VendorProfile) -> RankStart:
    """How this worker starts ranks on ``vendor``'s device."""
    device_type = vendor.device_type
    method = _DECIDED.get(device_type)
    if method is None:
        method = FORKSERVER if _forked_child_in_bad_fork(device_type) else FORK
        # A fork that is bad stays bad (a runtime once used, autograd's threads once started);
        # a good one is asked again: the worker's next test may start either.
        if method == FORKSERVER:
            _DECIDED[device_type] = method
    return RankStart(method, vendor)


def _device_module(device_type: str) -> object:
    import torch

    return getattr(torch, device_type, None)


def _usable_in_forked_child(device_type: str) -> bool:
    """In a forked child: whether the device's module says its runtime is usable here (a module
    without ``_is_in_bad_fork``, as CPU's, survives a fork) and autograd runs a backward."""
    import torch

    in_bad_fork = getattr(_device_module(device_type), "_is_in_bad_fork", None)
    if callable(in_bad_fork) and in_bad_fork():
        return False
    try:
        torch.ones(1, requires_grad=True).sum().backward()
    except RuntimeError:  # autograd's threads started in the parent
        return False
    return True


def _forked_child_in_bad_fork(device_type: str) -> bool:
    """Whether a child forked now cannot run ranks: its device unusable, or autograd refusing
    a backward. A child that dies before it answers counts as a bad fork: the fork server
    needs nothing of the worker's state."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the throwaway child: one byte, then gone without the parent's exit handlers
        try:
            os.close(read)
            os.write(write, b"0" if _usable_in_forked_child(device_type) else b"1")
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        said = answer.read()
    os.waitpid(pid, 0)
    return said != b"0"
