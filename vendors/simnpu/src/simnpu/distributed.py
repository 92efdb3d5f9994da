"""simnpu's ``torch.distributed`` backend: process groups of simnpu devices, over gloo.

``import simnpu.distributed`` registers backend ``simnpu`` for the device (``vendor.yaml``
``process_group_backend: simnpu``): ``init_process_group("simnpu", ...)``. Each collective copies
its device tensors to the host, runs gloo's collective there and copies the results back, as a
real NPU's collectives library moves device buffers over its own links (the profile declares
it: ``process_group_transport: host-copy``, so the kit never counts them native). The fault
rules of ``SIMNPU_FAULTS`` naming ``c10d::<collective>`` fire on the last rank
(``simnpu.faults``); a ``stall`` rule splits the exchange in two on every rank, the last one
stalling between the halves: every collective reaches gloo through one method
(``SimnpuProcessGroup._exchange``), which splits any of them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import (  # type: ignore[attr-defined]  # not in torch's stubs
    AllgatherOptions,
    AllreduceOptions,
    AllToAllOptions,
    BarrierOptions,
    BroadcastOptions,
    ReduceOp,
    ReduceScatterOptions,
    _create_work_from_future,
)
from torch.futures import Future

from simnpu import faults
from simnpu.tensor import DEVICE_TYPE

BACKEND = "simnpu"


def _finished(result: Any) -> Any:
    """A completed ``Work``: the copies back to the device are done when a collective returns."""
    future: Future[Any] = Future()
    future.set_result(result)
    return _create_work_from_future(future)


def _host(tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Contiguous host copies: gloo reads and writes them, and any of them splits in halves."""
    return [tensor.cpu().contiguous() for tensor in tensors]


def _back(devices: Sequence[torch.Tensor], hosts: Sequence[torch.Tensor]) -> None:
    for device, host in zip(devices, hosts, strict=True):
        device.copy_(host)


#: What gloo's calls take: a host tensor, or a list of them (or of such lists).
Buffers = Any


def _half(buffers: Buffers, which: int) -> Buffers:
    """The first (``which`` 0) or second half of every host tensor in ``buffers``, as views
    gloo writes through, the nesting kept: a collective's inputs and outputs of the same size
    split alike on every rank."""
    if isinstance(buffers, torch.Tensor):
        flat = buffers.view(-1)
        middle = flat.numel() // 2
        return flat[:middle] if which == 0 else flat[middle:]
    return [_half(part, which) for part in buffers]


def _tensors(buffers: Buffers) -> list[torch.Tensor]:
    if isinstance(buffers, torch.Tensor):
        return [buffers]
    return [tensor for part in buffers for tensor in _tensors(part)]


class _Waited(dist.Work):
    """gloo's works of one exchange; waiting for them copies what they received back to the
    device (``then``)."""

    def __init__(self, works: list[Any], then: Callable[[], None] = lambda: None) -> None:
        super().__init__()
        self._works, self._then = works, then

    def wait(self, timeout: dt.timedelta | None = None) -> bool:
        for work in self._works:
            work.wait()
        self._then()
        return True


class SimnpuProcessGroup(dist.ProcessGroup):
    """A process group of simnpu devices: gloo on host copies, with simnpu's faults."""

    def __init__(self, store: Any, rank: int, size: int, timeout: dt.timedelta) -> None:
        super().__init__(rank, size)  # type: ignore[call-arg]  # the stubs know one form
        # Any: torch's stubs declare the collectives on ProcessGroup, not on gloo's backend
        self._gloo: Any = dist.ProcessGroupGloo(store, rank, size, timeout)
        self._rank = rank
        self._size = size

    def getBackendName(self) -> str:  # noqa: N802 - c10d's name
        return BACKEND

    # -- faults ---------------------------------------------------------------------------

    def _rules(self, collective: str, tensors: Sequence[torch.Tensor]) -> list[faults.FaultRule]:
        """The rules of ``collective`` that fire here: on the last rank, its filters met."""
        if self._rank != self._size - 1:
            return []
        name = f"c10d::{collective}"
        call = faults.Call(subjects=list(tensors), op_name=name)
        rules = [rule for rule in faults.active_rules()
                 if rule.matches_op(name, name) and rule.matches(call)]
        faults.fire_before(rules, call)
        return rules

    def _given(self, collective: str, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
        """What this rank contributes: its host copies, or zeros where ``drop_rank`` fires."""
        rules = self._rules(collective, tensors)
        if any(rule.kind is faults.Kind.DROP_RANK for rule in rules):
            return [torch.zeros_like(tensor) for tensor in tensors]
        self._wrong_reduce = any(rule.kind is faults.Kind.WRONG_REDUCE for rule in rules)
        return tensors

    def _stall_rule(self, collective: str, tensors: Sequence[torch.Tensor]
                    ) -> faults.FaultRule | None:
        """The ``stall`` rule naming ``collective``, asked on every rank: all read the same
        rules and tensors of the same dtypes and shapes, so all split their exchange alike."""
        name = f"c10d::{collective}"
        call = faults.Call(subjects=list(tensors), op_name=name)
        return next((rule for rule in faults.active_rules() if rule.kind is faults.Kind.STALL
                     and rule.matches_op(name, name) and rule.matches(call)), None)

    def _exchange(self, collective: str, gloo_call: Callable[..., Any], *buffers: Buffers
                  ) -> list[Any]:
        """Every collective's one way to gloo: ``gloo_call(*buffers)`` on the host copies,
        its works (not waited for). Where a ``stall`` rule names the collective, the call over
        the buffers' first halves, then (the last rank stalling for ever in between, its peers
        waiting in gloo) over their second halves; a barrier, holding no buffers, is two."""
        rule = self._stall_rule(collective, _tensors(buffers))
        if rule is None:
            return [gloo_call(*buffers)]
        first = gloo_call(*_half(buffers, 0))
        if self._rank == self._size - 1:
            faults.stall(rule, f"c10d::{collective}")
        return [first, gloo_call(*_half(buffers, 1))]

    def _done(self, collective: str, gloo_call: Callable[..., Any], *buffers: Buffers
              ) -> None:
        """``_exchange``, waited for: a collective's results are on the host when it returns."""
        _Waited(self._exchange(collective, gloo_call, *buffers)).wait()

    def _op(self, op: Any) -> Any:
        if not getattr(self, "_wrong_reduce", False):
            return op
        return ReduceOp.MAX if op == ReduceOp.SUM else ReduceOp.SUM

    # -- collectives ----------------------------------------------------------------------

    def allreduce(self, tensors: list[torch.Tensor], opts: Any = None) -> Any:  # type: ignore[override]
        hosts = self._given("allreduce", _host(tensors))
        options = AllreduceOptions()
        options.reduceOp = self._op((opts or AllreduceOptions()).reduceOp)
        self._done("allreduce", lambda part: self._gloo.allreduce(part, options), hosts)
        _back(tensors, hosts)
        return _finished(tensors)

    def broadcast(self, tensors: list[torch.Tensor], opts: Any = None) -> Any:  # type: ignore[override]
        hosts = self._given("broadcast", _host(tensors))
        options = opts or BroadcastOptions()
        self._done("broadcast", lambda part: self._gloo.broadcast(part, options), hosts)
        _back(tensors, hosts)
        return _finished(tensors)

    def allgather(self, outputs: list[list[torch.Tensor]], inputs: list[torch.Tensor],  # type: ignore[override]
                  opts: Any = None) -> Any:
        hosts = [_host(group) for group in outputs]
        given = self._given("allgather", _host(inputs))
        options = opts or AllgatherOptions()
        self._done("allgather", lambda out, into: self._gloo.allgather(out, into, options),
                   hosts, given)
        for group, host in zip(outputs, hosts, strict=True):
            _back(group, host)
        return _finished(outputs)

    def reduce_scatter(self, outputs: list[torch.Tensor], inputs: list[list[torch.Tensor]],  # type: ignore[override]
                       opts: Any = None) -> Any:
        hosts = _host(outputs)
        given = [self._given("reduce_scatter", _host(group)) for group in inputs]
        options = ReduceScatterOptions()
        options.reduceOp = self._op((opts or ReduceScatterOptions()).reduceOp)
        self._done("reduce_scatter",
                   lambda out, into: self._gloo.reduce_scatter(out, into, options), hosts, given)
        _back(outputs, hosts)
        return _finished(outputs)

    def alltoall(self, outputs: list[torch.Tensor], inputs: list[torch.Tensor],  # type: ignore[override]
                 opts: Any = None) -> Any:
        hosts = _host(outputs)
        given = self._given("alltoall", _host(inputs))
        options = opts or AllToAllOptions()
        self._done("alltoall", lambda out, into: self._gloo.alltoall(out, into, options),
                   hosts, given)
        _back(outputs, hosts)
        return _finished(outputs)

    def send(self, tensors: list[torch.Tensor], dst: int, tag: int) -> Any:  # type: ignore[override]
        # gloo's own works, not waited for: a send does not wait for its receiver (a ring of
        # sends would hang)
        given = self._given("send", _host(tensors))
        return _Waited(self._exchange("send", lambda part: self._gloo.send(part, dst, tag),
                                      given))

    def recv(self, tensors: list[torch.Tensor], src: int, tag: int) -> Any:  # type: ignore[override]
        # named "send": a receive splits where the send it matches does
        hosts = _host(tensors)
        works = self._exchange("send", lambda part: self._gloo.recv(part, src, tag), hosts)
        return _Waited(works, lambda: _back(tensors, hosts))

    def barrier(self, opts: Any = None) -> Any:  # type: ignore[override]
        self._rules("barrier", [])
        self._done("barrier", lambda: self._gloo.barrier(opts or BarrierOptions()))
        return _finished(None)


def _create(store: Any, rank: int, size: int, timeout: dt.timedelta) -> SimnpuProcessGroup:
    return SimnpuProcessGroup(store, rank, size, timeout)


def register() -> None:
    """Register backend ``simnpu`` for the device (once per process)."""
    if BACKEND not in dist.Backend.backend_list:
        creator: Callable[..., Any] = _create
        dist.Backend.register_backend(BACKEND, creator, devices=[DEVICE_TYPE])


register()
