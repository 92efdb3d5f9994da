"""What a run executes: the standard's tests in its scope, or one shard of them.

A shard is a plan, not a special case: every shard computes the same whole plan (tiers,
--select) and keeps its own part, so shards started anywhere agree without talking. The part is
chosen by a stable hash of the test id, or, given the recorded durations of a previous run, by
balancing those durations (longest first onto the least loaded shard).
"""

from __future__ import annotations

import hashlib
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.errors import InputError
from kit.patterns import select_ids
from kit.standard import Standard

#: How shard membership is decided; the report records which.
BY_HASH = "test-id-hash"
BY_DURATIONS = "durations"

_SHARD = re.compile(r"(0|[1-9][0-9]*)/([1-9][0-9]*)")
#: A test no earlier run timed counts as this many seconds when no timed test gives a median.
_UNTIMED_S = 1.0


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (0-based) of ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``K/N`` with 0 <= K < N, as ``--shard`` takes it (``$SLURM_ARRAY_TASK_ID/N``)."""
        match = _SHARD.fullmatch(text.strip())
        if match is None:
            raise InputError(f"--shard: expected K/N (shard K of N, K from 0), got {text!r}")
        shard = cls(int(match.group(1)), int(match.group(2)))
        if shard.index >= shard.count:
            raise InputError(f"--shard {text}: K must be below N (shards are 0..{shard.count - 1})")
        return shard

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class Durations:
    """Per-test seconds recorded by a previous run, and which report they came from."""

    seconds: Mapping[str, float]
    report_sha256: str

    @classmethod
    def load(cls, source: Path) -> Durations:
        from kit.report.read import read_report

        loaded = read_report(source)
        seconds = {r.id: r.duration_s for r in loaded.report.records}
        return cls(seconds=seconds, report_sha256=loaded.sha256)


@dataclass(frozen=True)
class Plan:
    """The tests a run executes (sorted) and, on a shard, which shard of which whole plan."""

    tests: tuple[str, ...]
    shard: Shard | None = None
    balance: str | None = None
    durations_sha256: str | None = None

    def shard_json(self) -> dict[str, Any] | None:
        """The report's ``run.shard``: enough to tell shards of one run apart and check them."""
        if self.shard is None:
            return None
        return {
            "index": self.shard.index,
            "count": self.shard.count,
            "balance": self.balance,
            "durations_sha256": self.durations_sha256,
            "tests": list(self.tests),
        }


def scope_tests(standard: Standard, tiers: Sequence[str], select: Sequence[str]) -> list[str]:
    """The standard's locked tests in the run's tiers (never what a worker collected: a
    test the vendor's code hides from collection is still planned, and fails)."""
    wanted = [t for tier in tiers for t in standard.test_ids(tier)]
    return sorted(select_ids(wanted, tuple(select)))


def make_plan(
    standard: Standard,
    tiers: Sequence[str],
    select: Sequence[str],
    shard: Shard | None = None,
    durations: Durations | None = None,
) -> Plan:
    scope = scope_tests(standard, tiers, select)
    if shard is None:
        return Plan(tests=tuple(scope))
    if durations is None:
        mine = [t for t in scope if hash_shard(t, shard.count) == shard.index]
        return Plan(tuple(mine), shard, BY_HASH)
    parts = balanced_parts(scope, durations.seconds, shard.count)
    return Plan(tuple(sorted(parts[shard.index])), shard, BY_DURATIONS, durations.report_sha256)


def hash_shard(test_id: str, count: int) -> int:
    """The shard of ``test_id``: the same on every machine, Python and kit run."""
    digest = hashlib.sha256(test_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


def balanced_parts(
    tests: Sequence[str], seconds: Mapping[str, float], count: int
) -> list[list[str]]:
    """``count`` parts of ``tests`` with near-equal total recorded time.

    Longest test first onto the least loaded part (ties: the lower index); a test the
    previous run did not time counts as the median timed test. Deterministic for the same
    inputs, so every shard computes the same parts.
    """
    timed = [seconds[t] for t in tests if t in seconds]
    default = statistics.median(timed) if timed else _UNTIMED_S
    cost = {t: max(0.0, seconds.get(t, default)) for t in tests}
    loads = [0.0] * count
    parts: list[list[str]] = [[] for _ in range(count)]
    for test_id in sorted(tests, key=lambda t: (-cost[t], t)):
        lightest = min(range(count), key=lambda k: (loads[k], k))
        parts[lightest].append(test_id)
        loads[lightest] += cost[test_id]
    return parts
