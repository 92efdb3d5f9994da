"""Timing a model on the device, in the worker, after its judged call ran.

The model and inputs are those the judged call used (already on the device): ``WARMUP_ITERATIONS``
calls thrown away, then up to ``TIMED_ITERATIONS`` timed ones, each ended by the device's
synchronize call, none started past ``TIME_CAP_S``. The peak memory is the device's own
statistic where it keeps one (the profile's ``max_memory_allocated``, else
``torch.<device>.max_memory_allocated``); a device without one is recorded as ``not reported``.
A measurement that raises is recorded in one line and changes nothing else: the verdict is the
judged call's, never the measurement's.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import torch

from kit.host import cpu_model, usable_cpus
from kit.outcomes import failure_message
from kit.tiers.models.flows import call_module, map_tensors
from kit.tiers.models.interface import BuiltModel, ModelCase
from kit.tiers.models.performance import (
    NOT_REPORTED,
    TIME_CAP_S,
    TIMED_ITERATIONS,
    WARMUP_ITERATIONS,
    Host,
    PerformanceFigures,
)
from kit.tiers.models.training import forward_backward
from kit.vendors import VendorProfile

Step = Callable[[], object]
#: Characters of a failed measurement's one line kept in the record.
PROBLEM_CHARS = 300


def measure_model(built: BuiltModel, case: ModelCase, vendor: VendorProfile,
                  device_count: int) -> PerformanceFigures:
    """``case``'s figures on ``vendor``'s device (``built`` as its judged call left it)."""
    kind = "training" if case.training else "inference"
    batch, host = batch_of(built.inputs), describe_host(device_count)
    try:
        return _measured(built, case, vendor, kind, batch, host)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - a vendor's skip too: the verdict stands
        return PerformanceFigures(kind, batch, (), None, None, NOT_REPORTED, False, host,
                                  failure_message(exc)[:PROBLEM_CHARS])


def _measured(built: BuiltModel, case: ModelCase, vendor: VendorProfile, kind: str, batch: int,
              host: Host) -> PerformanceFigures:
    device = vendor.device_type
    synchronize_name, synchronize = synchronize_call(vendor)
    step = _training_step(built, case, device) if case.training else _inference_step(built, device)
    reset = resolve(f"torch.{device}.reset_peak_memory_stats")
    if reset is not None:
        reset()
    latencies, capped = time_calls(step, synchronize)
    peak, memory = peak_memory(vendor)
    return PerformanceFigures(kind, batch, latencies, synchronize_name, peak, memory, capped,
                              host)


def time_calls(step: Step, synchronize: Step | None,
               cap_s: float = TIME_CAP_S) -> tuple[tuple[float, ...], bool]:
    """The timed calls' latencies, and whether the cap stopped them early."""
    started = time.perf_counter()
    for _ in range(WARMUP_ITERATIONS):
        _timed(step, synchronize)
        if time.perf_counter() - started > cap_s:
            return (), True
    latencies: list[float] = []
    while len(latencies) < TIMED_ITERATIONS:
        latencies.append(_timed(step, synchronize))
        if len(latencies) < TIMED_ITERATIONS and time.perf_counter() - started > cap_s:
            return tuple(latencies), True
    return tuple(latencies), False


def _timed(step: Step, synchronize: Step | None) -> float:
    began = time.perf_counter()
    step()
    if synchronize is not None:
        synchronize()
    return time.perf_counter() - began


def _inference_step(built: BuiltModel, device: str) -> Step:
    module = built.module.to(device)
    inputs = map_tensors(built.inputs, lambda t: t.to(device))
    return lambda: call_module(module, inputs)


def _training_step(built: BuiltModel, case: ModelCase, device: str) -> Step:
    """Forward, loss, backward and one SGD step (the parameters move: the evidence is saved)."""
    module = built.module.to(device)
    inputs = map_tensors(built.inputs, lambda t: t.to(device))
    optimizer = torch.optim.SGD(module.parameters(), lr=0.1, momentum=0.9)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        forward_backward(module, inputs, case)
        optimizer.step()

    return step


def batch_of(inputs: Mapping[str, torch.Tensor] | tuple[torch.Tensor, ...]) -> int:
    """Samples per call: the first input tensor's leading dimension (1 for a scalar input)."""
    first = next(iter(inputs.values() if isinstance(inputs, Mapping) else inputs), None)
    return int(first.shape[0]) if isinstance(first, torch.Tensor) and first.dim() else 1


def synchronize_call(vendor: VendorProfile) -> tuple[str | None, Step | None]:
    """The call that waits for the device: the profile's, else ``torch.<device>.synchronize``;
    (None, None) when the device offers none."""
    name = vendor.synchronize or f"torch.{vendor.device_type}.synchronize"
    call = resolve(name)
    if call is None and vendor.synchronize is not None:
        raise ValueError(f"the profile's synchronize {name!r} is not a callable here")
    return (name, call) if call is not None else (None, None)


def peak_memory(vendor: VendorProfile) -> tuple[int | None, str]:
    """The device's peak allocated bytes, and in words where it comes from or why none."""
    name = vendor.max_memory_allocated or f"torch.{vendor.device_type}.max_memory_allocated"
    call = resolve(name)
    if call is None:
        return None, NOT_REPORTED
    value = call()
    return (int(value), name) if isinstance(value, int) and value >= 0 else (None, NOT_REPORTED)


def resolve(name: str) -> Callable[[], Any] | None:
    """The callable a dotted name names (``torch.cuda.synchronize``), importing modules along
    the way; None when there is no such callable."""
    parts = name.split(".")
    try:
        found: Any = importlib.import_module(parts[0])
    except ImportError:
        return None
    for index, part in enumerate(parts[1:], start=1):
        if hasattr(found, part):
            found = getattr(found, part)
            continue
        try:
            found = importlib.import_module(".".join(parts[: index + 1]))
        except ImportError:
            return None
    return found if callable(found) else None


def describe_host(device_count: int) -> Host:
    return Host(cpu_model=cpu_model(), cpu_count=os.cpu_count() or 1, usable_cpus=usable_cpus(),
                threads=torch.get_num_threads(), device_count=device_count)
