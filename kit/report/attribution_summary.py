"""Per-op totals of where a run's device calls ran their ops (``summary.attribution``).

Built from the records' ``details.dispatch`` (``kit.attribution``: every unit record carries one
where the standard asks for attribution, passing or not), so a verifier derives the same totals
from the records. Absent (None) when no record carries one: a standard that does not ask (v1)
keeps its report's summary as it was.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import methodcaller
from typing import Any, TypedDict

from kit.attribution.dispatch import Where
from kit.results import DISPATCH_KEY, RecordFields

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


def attribution_summary(records: Sequence[RecordFields],
                        gathered: GatheredDispatches | None = None) -> AttributionTotals | None:
    """Per op (sorted): in how many tests it ran natively, through the fallback or decomposed;
    the tests attributed and those with a fallback; the native rate: native over native plus
    fallback (test, op) pairs (decomposed ops count through their parts), None without any.
    ``gathered``: ``gather_dispatches(records)``, where the caller has it."""
    gathered = gather_dispatches(records) if gathered is None else gathered
    found, lists, counted = gathered.found, gathered.lists, gathered.counted
    if lists is None or counted is None:
        found = list(recorded_dispatches(records))
        lists = _lists_per_place(found)
        counted = _counted(lists)
    if not found:
        return None
    native, fallback = counted[_NATIVE].total(), counted[_FALLBACK].total()
    return AttributionTotals(
        tests=len(found),
        tests_with_fallback=sum(map(bool, lists[_FALLBACK])),
        native_rate=round(native / (native + fallback), 6) if native + fallback else None,
        ops={op: {where: counted[where][op] for where in _COUNTED_NAMES}
             for op in sorted(set().union(*counted.values()))},
    )


# Verify derives the attribution again for every record of a report: one pass over the records
# gathers each dispatch's lists per place as it is found (a whole run's records touched once),
# then they are counted, and whether all are well formed as JSON reads them (dicts of places,
# lists of str) is asked of them all at once, in C: a name's type once per distinct name, of
# the counts. A dispatch that is not (a mapping, a str subclass, a malformed one) leaves the
# answer to ``recorded_dispatches``, one by one.

#: Per place of ``Where``, the lists of op names the dispatches give it, in record order.
_PlaceLists = dict[str, list[list[str]]]


@dataclass(frozen=True)
class GatheredDispatches:
    """A run's dispatches gathered and counted once, for the attribution totals and verify's
    op-name check alike (``kit.report.model.Report.gathered_dispatches``)."""

    #: Every record's ``details.dispatch``, in order.
    found: list[Any]
    #: Their lists per place; None where one is not a mapping of places of ``Where``.
    lists: _PlaceLists | None
    #: The op names counted per counted place; None where a dispatch is not as JSON reads it
    #: (``recorded_dispatches`` reads them one by one then).
    counted: dict[str, Counter[str]] | None


def gather_dispatches(records: Iterable[RecordFields]) -> GatheredDispatches:
    found, lists = _gathered(records)
    return GatheredDispatches(found, lists,
                              None if lists is None else _counted_as_json(found, lists))


def _gathered(records: Iterable[RecordFields]) -> tuple[list[Any], _PlaceLists | None]:
    """Every record's ``details.dispatch``, in order, and their lists per place; None for the
    lists where one is not a mapping of places of ``Where``."""
    found: list[Any] = []
    lists: _PlaceLists = {where: [] for where in _PLACE_NAMES}
    shaped = True
    for record in records:
        data = record.details.get(DISPATCH_KEY)
        if data is not None:
            found.append(data)
            try:
                for where, names in data.items():
                    lists[where].append(names)
            except (AttributeError, KeyError, TypeError):  # no mapping; a place ``Where`` lacks
                shaped = False
    return found, lists if shaped else None


def _counted_as_json(found: list[Any], lists: _PlaceLists) -> dict[str, Counter[str]] | None:
    """The op names counted per place where every dispatch is a dict of places, each a list
    of str; else None."""
    if not set(map(type, found)) <= {dict} \
            or not set(map(type, chain.from_iterable(lists.values()))) <= {list}:
        return None
    try:
        counted = _counted(lists)
    except TypeError:  # a list or a dict as a name
        return None
    uncounted = (lists[where] for where in _PLACE_NAMES if where not in counted)
    if not set(map(type, chain.from_iterable(counted.values()))) <= {str} \
            or not _all_str(chain.from_iterable(chain.from_iterable(uncounted))):
        return None
    return counted


def _counted(lists: _PlaceLists) -> dict[str, Counter[str]]:
    return {where: Counter(chain.from_iterable(lists[where])) for where in _COUNTED_NAMES}


def _lists_per_place(dispatches: list[Mapping[str, list[str]]]) -> _PlaceLists:
    lists: _PlaceLists = {where: [] for where in _PLACE_NAMES}
    for places in dispatches:
        for where, names in places.items():
            lists[where].append(names)
    return lists


def dispatch_op_names(records: Sequence[RecordFields],
                      gathered: GatheredDispatches | None = None) -> set[str]:
    """Every op name the records' dispatches that ``recorded_dispatches`` reads give, at any
    place: the counted names and the other places' lists, where every dispatch is as JSON
    reads it (verify's op-name check of a whole run); else read one by one. ``gathered``:
    ``gather_dispatches(records)``, where the caller has it."""
    gathered = gather_dispatches(records) if gathered is None else gathered
    lists, counted = gathered.lists, gathered.counted
    if lists is not None and counted is not None:
        uncounted = (lists[where] for where in _PLACE_NAMES if where not in counted)
        return set().union(*counted.values()).union(
            chain.from_iterable(chain.from_iterable(uncounted)))
    return set(chain.from_iterable(chain.from_iterable(
        map(methodcaller("values"), recorded_dispatches(records)))))


def recorded_dispatches(records: Iterable[RecordFields]) -> Iterator[Mapping[str, list[str]]]:
    """The records' ``details.dispatch``, in order, those ``dispatch_places`` reads
    (``kit.attribution.dispatch``: places of ``Where``, each a list of op names); the others
    are left out."""
    for record in records:
        data = record.details.get(DISPATCH_KEY)
        if data is None:
            continue
        if type(data) is dict:  # as JSON reads it: asked here, without a call per record
            if not data.keys() <= _PLACES:
                continue
            for names in data.values():
                if type(names) is not list:
                    break
                try:
                    "".join(names)  # TypeError on any item not a str
                except TypeError:
                    break
            else:
                yield data
        elif (places := well_formed_dispatch(data)) is not None:
            yield places


def _is_list_of_str(names: Any) -> bool:
    return isinstance(names, list) and _all_str(names)


def _all_str(names: Iterable[Any]) -> bool:
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
