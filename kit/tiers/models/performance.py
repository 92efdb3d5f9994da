"""A model test's performance figures as its record holds them (``details.performance``).

Recorded, not graded: the worker times the model after it ran the judged call (``measure.py``),
and the figures travel with the record to ``ckit show``, ``ckit diff`` and the portal. A reader
gets them back through ``PerformanceFigures.from_json``: one typed value, the one list of its
fields. This module imports no torch, so the report's readers can use it.

The statistic is the median latency of ``TIMED_ITERATIONS`` calls after ``WARMUP_ITERATIONS``;
the spread is the interquartile range over the median, so a noisy machine shows as noisy
(``NOISY_SPREAD``) rather than being averaged away. The host (CPU model, cores, torch's
threads, devices) is recorded beside the figures: only figures of the same host compare.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import median, quantiles
from typing import Any

from kit.errors import InputError
from kit.results import PERFORMANCE_KEY, TestRecord

#: Calls made and thrown away before timing (first-call compilation, caches, allocators).
WARMUP_ITERATIONS = 2
#: Calls timed, each ended by the device's synchronize call.
TIMED_ITERATIONS = 10
#: Seconds a model's measurement (warm-up included) may take; past it, no further call starts
#: and the figures are those of the calls already timed, marked ``capped``.
TIME_CAP_S = 5.0
#: A spread (interquartile range over the median) above this marks the figures noisy.
NOISY_SPREAD = 0.2
#: What the record says of a device that reports no memory statistics.
NOT_REPORTED = "not reported"


@dataclass(frozen=True)
class Host:
    """Where the figures were measured: what makes two runs' figures comparable."""

    cpu_model: str
    #: Logical CPUs of the machine, and those the worker may run on.
    cpu_count: int
    usable_cpus: int
    #: torch's intra-op threads in the worker (``CKIT_WORKER_THREADS``).
    threads: int
    device_count: int

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))

    @classmethod
    def from_json(cls, data: Any) -> Host:
        fields = _exact(data, HOST_FIELDS, "host")
        return cls(cpu_model=_text(fields, "cpu_model"),
                   **{name: _count(fields, name) for name in HOST_FIELDS[1:]})


HOST_FIELDS = ("cpu_model", "cpu_count", "usable_cpus", "threads", "device_count")


@dataclass(frozen=True)
class PerformanceFigures:
    """One model test's measurement: latency, throughput, peak memory, where and how."""

    #: What was timed: ``inference`` (the eager forward) or ``training`` (forward, loss,
    #: backward and one SGD step).
    kind: str
    #: Samples per call: the model input's leading dimension.
    batch: int
    #: The timed calls' latencies in seconds, in the order they ran.
    latencies_s: tuple[float, ...]
    #: The call that waited for the device after each iteration; None: none was available, so
    #: an asynchronous device's figures would be launch times.
    synchronize: str | None
    #: The device's peak allocated bytes over the measurement; None: ``memory`` says why.
    peak_memory_bytes: int | None
    memory: str
    #: Whether the time cap stopped the measurement before ``TIMED_ITERATIONS``.
    capped: bool
    host: Host
    #: Why there are no figures (the measurement raised), in one line; None when measured.
    problem: str | None = None

    @property
    def latency_s(self) -> float | None:
        """The median latency; None when no call was timed."""
        return median(self.latencies_s) if self.latencies_s else None

    @property
    def throughput(self) -> float | None:
        """Samples per second at the model's batch, from the median latency."""
        latency = self.latency_s
        return self.batch / latency if latency else None

    @property
    def quartiles(self) -> tuple[float, float] | None:
        """The lower and upper quartile of the latencies (their range below four calls)."""
        if not self.latencies_s:
            return None
        if len(self.latencies_s) < 4:
            return min(self.latencies_s), max(self.latencies_s)
        low, _, high = quantiles(self.latencies_s, n=4, method="inclusive")
        return low, high

    @property
    def spread(self) -> float | None:
        """The interquartile range over the median latency."""
        latency, quartiles = self.latency_s, self.quartiles
        if not latency or quartiles is None:
            return None
        return (quartiles[1] - quartiles[0]) / latency

    @property
    def noisy(self) -> bool:
        spread = self.spread
        return spread is not None and spread > NOISY_SPREAD

    def to_json(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in FIELDS}
        data["latencies_s"] = list(self.latencies_s)
        data["host"] = self.host.to_json()
        return data

    @classmethod
    def from_json(cls, data: Any) -> PerformanceFigures:
        """The figures a record holds; ``InputError`` in one line when they are malformed."""
        fields = _exact(data, FIELDS, PERFORMANCE_KEY)
        latencies = fields["latencies_s"]
        if not isinstance(latencies, list) or not all(_seconds(x) for x in latencies):
            raise InputError(f"{PERFORMANCE_KEY}.latencies_s: expected a list of seconds >= 0")
        return cls(
            kind=_choice(fields, "kind", KINDS), batch=_count(fields, "batch"),
            latencies_s=tuple(float(x) for x in latencies),
            synchronize=_optional_text(fields, "synchronize"),
            peak_memory_bytes=_optional_count(fields, "peak_memory_bytes"),
            memory=_text(fields, "memory"), capped=_flag(fields, "capped"),
            host=Host.from_json(fields["host"]), problem=_optional_text(fields, "problem"),
        )


FIELDS = ("kind", "batch", "latencies_s", "synchronize", "peak_memory_bytes", "memory",
          "capped", "host", "problem")
KINDS = ("inference", "training")


def performance_of(record: TestRecord) -> PerformanceFigures | None:
    """A record's figures; None when it has none (another tier, an older kit, not executed)."""
    data = record.details.get(PERFORMANCE_KEY)
    return None if data is None else PerformanceFigures.from_json(data)


# -- reading -----------------------------------------------------------------------------------

def _exact(data: Any, names: tuple[str, ...], where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping) or set(data) != set(names):
        raise InputError(f"details.{where}: expected an object of exactly {', '.join(names)}")
    return data


def _text(fields: Mapping[str, Any], name: str) -> str:
    value = fields[name]
    if not isinstance(value, str):
        raise InputError(f"details.{PERFORMANCE_KEY}.{name}: expected text")
    return value


def _optional_text(fields: Mapping[str, Any], name: str) -> str | None:
    return None if fields[name] is None else _text(fields, name)


def _choice(fields: Mapping[str, Any], name: str, options: tuple[str, ...]) -> str:
    value = _text(fields, name)
    if value not in options:
        raise InputError(f"details.{PERFORMANCE_KEY}.{name}: expected one of {', '.join(options)}")
    return value


def _count(fields: Mapping[str, Any], name: str) -> int:
    value = fields[name]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"details.{PERFORMANCE_KEY}.{name}: expected a count")
    return value


def _optional_count(fields: Mapping[str, Any], name: str) -> int | None:
    return None if fields[name] is None else _count(fields, name)


def _flag(fields: Mapping[str, Any], name: str) -> bool:
    value = fields[name]
    if not isinstance(value, bool):
        raise InputError(f"details.{PERFORMANCE_KEY}.{name}: expected true or false")
    return value


def _seconds(value: Any) -> bool:
    return (not isinstance(value, bool) and isinstance(value, (int, float))
            and math.isfinite(value) and value >= 0)
