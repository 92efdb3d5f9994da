"""Per-op totals of where a run's device calls ran their ops (``summary.attribution``).

Built from the records' ``details.dispatch`` (``kit.attribution``: every unit record carries one
where the standard asks for attribution, passing or not), so a verifier derives the same totals
from the records. Absent (None) when no record carries one: a standard that does not ask (v1)
keeps its report's summary as it was.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, TypedDict

from kit.attribution.dispatch import Where
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
#: Every place ``details.dispatch`` may name (``Where``).
_PLACE_NAMES = tuple(where.value for where in Where)
_PLACES = frozenset(_PLACE_NAMES)


def attribution_summary(records: Sequence[TestRecord]) -> AttributionTotals | None:
    """Per op (sorted): in how many tests it ran natively, through the fallback or decomposed;
    the tests attributed and those with a fallback; the native rate: native over native plus
    fallback (test, op) pairs (decomposed ops count through their parts), None without any."""
    dispatches, read = _read_dispatches(records)
    if not dispatches:
        return None
    counted = {where: read.counted[where] for where in _COUNTED_NAMES}
    native, fallback = counted[_NATIVE].total(), counted[_FALLBACK].total()
    return AttributionTotals(
        tests=len(dispatches),
        tests_with_fallback=sum(map(bool, read.lists[_FALLBACK])),
        native_rate=round(native / (native + fallback), 6) if native + fallback else None,
        ops={op: {where: counted[where][op] for where in _COUNTED_NAMES}
             for op in sorted(set().union(*counted.values()))},
    )


def recorded_dispatches(records: Iterable[TestRecord]) -> list[Mapping[str, list[str]]]:
    """The records' ``details.dispatch``, in order, those ``dispatch_places`` reads
    (``kit.attribution.dispatch``: places of ``Where``, each a list of op names); the others
    are left out."""
    return _read_dispatches(records)[0]


@dataclass(frozen=True)
class _PlacesRead:
    """Per place of ``Where``: the lists of op names the dispatches give it, in record order,
    and how often each op is named there."""

    lists: dict[str, list[list[str]]]
    counted: dict[str, Counter[str]]


def _read_dispatches(records: Iterable[TestRecord]
                     ) -> tuple[list[Mapping[str, list[str]]], _PlacesRead]:
    """``recorded_dispatches``, and what they give each place."""
    found: list[Any] = []
    lists: dict[str, list[list[str]]] = {where: [] for where in _PLACE_NAMES}
    shaped = True
    # One pass over the records, each dispatch's lists gathered as it is found: a whole run's
    # records touched once; whether all are well formed is asked of them all at once after.
    for record in records:
        data = record.details.get(DISPATCH_KEY)
        if data is not None:
            found.append(data)
            try:
                for where, names in data.items():
                    lists[where].append(names)
            except (AttributeError, KeyError):  # no mapping; a place ``Where`` lacks
                shaped = False
    read = _read_as_json(found, lists) if shaped else None
    if read is not None:
        return found, read
    dispatches = [places for data in found if (places := _read_one(data)) is not None]
    lists = {where: [] for where in _PLACE_NAMES}
    for places in dispatches:
        for where, names in places.items():
            lists[where].append(names)
    return dispatches, _counted(lists)


def _counted(lists: dict[str, list[list[str]]]) -> _PlacesRead:
    return _PlacesRead(lists, {where: Counter(chain.from_iterable(of_place))
                               for where, of_place in lists.items()})


def _read_as_json(dispatches: list[Any], lists: dict[str, list[list[str]]]
                  ) -> _PlacesRead | None:
    """The places' lists counted where every dispatch is well formed as JSON reads one (a dict
    of places, each a list of str), asked of them all at once, in C (a name's type once per
    distinct name, of the counts). None where one is not (a mapping, a malformed one):
    ``_read_one`` then answers for each."""
    if not set(map(type, dispatches)) <= {dict}:
        return None
    try:
        read = _counted(lists)
    except TypeError:  # a list or a dict as a name, or a number as the list
        return None
    every = chain.from_iterable(lists.values())
    names = chain.from_iterable(read.counted.values())
    if not set(map(type, every)) <= {list} or not set(map(type, names)) <= {str}:
        return None
    return read


def _read_one(data: Any) -> Mapping[str, list[str]] | None:
    """One dispatch as ``recorded_dispatches`` reads it: a dict as JSON reads one (lists
    exactly), another value by ``well_formed_dispatch``."""
    if type(data) is not dict:
        return well_formed_dispatch(data)
    if not data.keys() <= _PLACES:
        return None
    for names in data.values():
        if type(names) is not list or not _all_str(names):
            return None
    return data


def _is_list_of_str(names: Any) -> bool:
    return isinstance(names, list) and _all_str(names)


def _all_str(names: list[Any]) -> bool:
    try:
        "".join(names)  # TypeError on any item not a str (a str subclass is one)
    except TypeError:
        return False
    return True


def well_formed_dispatch(data: Any) -> Mapping[str, list[str]] | None:
    """``kit.attribution.dispatch.dispatch_places``: ``data`` where it is a mapping of places of
    ``Where`` to lists of strings, else None (the same answer for every value)."""
    if not isinstance(data, Mapping) or not data.keys() <= _PLACES:
        return None
    return data if all(map(_is_list_of_str, data.values())) else None


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
