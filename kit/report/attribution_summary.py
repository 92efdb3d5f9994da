"""Per-op totals of where a run's device calls ran their ops (``summary.attribution``).

Built from the records' ``details.dispatch`` (``kit.attribution``: every unit record carries one
where the standard asks for attribution, passing or not), so a verifier derives the same totals
from the records. Absent (None) when no record carries one: a standard that does not ask (v1)
keeps its report's summary as it was.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from kit.attribution.dispatch import Where, dispatch_places
from kit.results import DISPATCH_KEY, TestRecord

#: What attribution is, said wherever it is shown: the dispatcher of the vendor's own process
#: placed each op (``kit.attribution``), so it is the vendor's word, not the kit's measurement.
REPORTED_BY = "reported by the vendor's process"
#: Runs finished since then have summary.md say so; an older report's summary.md regenerates
#: as it was signed (verify's step 13 compares it byte for byte).
REPORTED_BY_SINCE = dt.datetime(2026, 11, 29, tzinfo=dt.UTC)


def says_who_reported(finished_at: str) -> bool:
    """Whether a summary of a run finished at ``finished_at`` (ISO) says ``REPORTED_BY``."""
    return dt.datetime.fromisoformat(finished_at) >= REPORTED_BY_SINCE


#: The places counted per op: an op that only ever ran on CPU tensors is no device op.
COUNTED = (Where.NATIVE, Where.FALLBACK, Where.DECOMPOSED)
_COUNTED_NAMES = tuple(place.value for place in COUNTED)
_NATIVE, _FALLBACK = Where.NATIVE.value, Where.FALLBACK.value


def attribution_summary(records: Sequence[TestRecord]) -> AttributionTotals | None:
    """Per op (sorted): in how many tests it ran natively, through the fallback or decomposed;
    the tests attributed and those with a fallback; the native rate: native over native plus
    fallback (test, op) pairs (decomposed ops count through their parts), None without any."""
    # Verify derives this again for every record of a report: plain strings and dicts here,
    # read as ``Dispatch.from_json`` reads them (``dispatch_places``), no object per record.
    per_op: dict[str, dict[str, int]] = {}
    tests = tests_with_fallback = 0
    for record in records:
        places = dispatch_places(record.details.get(DISPATCH_KEY))
        if places is None:
            continue
        tests += 1
        tests_with_fallback += bool(places.get(_FALLBACK))
        for where in _COUNTED_NAMES:
            for op in places.get(where, ()):
                counts = per_op.get(op)
                if counts is None:
                    counts = per_op[op] = dict.fromkeys(_COUNTED_NAMES, 0)
                counts[where] += 1
    if not tests:
        return None
    native = sum(c[_NATIVE] for c in per_op.values())
    fallback = sum(c[_FALLBACK] for c in per_op.values())
    return AttributionTotals(
        tests=tests,
        tests_with_fallback=tests_with_fallback,
        native_rate=round(native / (native + fallback), 6) if native + fallback else None,
        ops={op: per_op[op] for op in sorted(per_op)},
    )


class AttributionJson(TypedDict):
    tests: int
    tests_with_fallback: int
    native_rate: float | None
    #: op -> {native, fallback, decomposed} test counts.
    ops: dict[str, dict[str, int]]


@dataclass(frozen=True)
class AttributionTotals:
    """``summary.attribution``, typed (``kit.report.model.Report.attribution``)."""

    tests: int
    tests_with_fallback: int
    native_rate: float | None
    #: op -> {native, fallback, decomposed} test counts.
    ops: Mapping[str, Mapping[str, int]]

    def fallback_ops(self) -> tuple[tuple[str, int], ...]:
        """``(op, tests)`` of the ops that went through the fallback, the most frequent first."""
        found = [(op, counts[Where.FALLBACK.value]) for op, counts in self.ops.items()
                 if counts[Where.FALLBACK.value]]
        return tuple(sorted(found, key=lambda item: (-item[1], item[0])))

    def to_json(self) -> AttributionJson:
        return {
            "tests": self.tests,
            "tests_with_fallback": self.tests_with_fallback,
            "native_rate": self.native_rate,
            "ops": {op: dict(counts) for op, counts in self.ops.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AttributionTotals:
        rate = data["native_rate"]
        return cls(
            tests=int(data["tests"]),
            tests_with_fallback=int(data["tests_with_fallback"]),
            native_rate=None if rate is None else float(rate),
            ops={str(op): {place.value: int(counts[place.value]) for place in COUNTED}
                 for op, counts in data["ops"].items()},
        )
