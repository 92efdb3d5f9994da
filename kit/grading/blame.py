"""Blame: a failing composite test names the failing primitive tests it may be failing through.

An op spec (``unit/opspec/<template>/<dtype>/<case>``) or a model on the device's eager path
(``models/<source>/<model>/eager``, float32) calls several ATen ops; when one of them is broken,
it fails along with that op's own OpInfo tests. Where a failing test used (traced once on CPU,
``kit.aten_trace``) an op whose OpInfo tests fail in the same dtype *in the same way* (wrong
values, the same semantic failure, an exception, a dead worker: ``failure_way``) *on inputs its
call gives the op* (a plain sample for any call; ``noncontiguous`` only where the call passes a
strided tensor, ``out`` only where it calls the ``out=`` overload...: ``_VARIANT_USES`` against
``Primitive.uses``), its record's ``details.suspects`` lists those failing test ids, ranked by
evidence: the composite's own fused kernel first (attention, seen as the call names it even
where CPU splits it into other ops), then the op with the most such failures. An op the call
reaches only in ways its tests pass is not named, whatever else of it fails. ``ckit show``
groups the failures by suspected root. Which tests blame and what they call is their tier's answer
(``Tier.blame_dtype``, ``Tier.primitives``).

Computed when the report is built, from the records and the standard alone (deterministic).
Suspects are advisory: they change no status, count or grade. Verification checks that each is
a failing OpInfo test of the report in the record's dtype (``check_suspects``) without tracing
again.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kit.aten_trace import EMPTY, FUSED, INPLACE, OUT, PLAIN, STRIDED
from kit.results import FAILURE_STATUSES, RecordFields, Status, TestRecord
from kit.standard import Standard
from kit.tiers.registry import find_tier
from kit.tiers.unit.unit_id import OPINFO_PREFIXES, UnitId

SUSPECTS = "suspects"
#: At most this many suspects per record: the first failing tests of each suspected op.
MAX_SUSPECTS = 8


def with_suspects(records: Sequence[TestRecord], standard: Standard) -> list[TestRecord]:
    """``records`` with ``details.suspects`` on every failing op spec test that has any."""
    failing_primitives = _failing_opinfo(records)
    if not failing_primitives:
        return list(records)
    blamed = []
    for record in records:
        suspects = _suspects(record, standard, failing_primitives)
        blamed.append(replace(record, details={**record.details, SUSPECTS: suspects})
                      if suspects else record)
    return blamed


@dataclass(frozen=True)
class _Failure:
    """One failing OpInfo test of a primitive, as blame weighs it."""

    test_id: str
    #: How it failed (``failure_way``).
    way: str
    #: The use of the op its inputs stand for (``kit.aten_trace.Primitive.uses``), or None: a
    #: test of something no composite's call meets (an error input, a gradient, a view write).
    use: str | None


def _failing_opinfo(records: Iterable[TestRecord]) -> dict[tuple[str, str], list[_Failure]]:
    """(op name, dtype) -> its failing OpInfo tests, sorted by id."""
    failing: dict[tuple[str, str], list[_Failure]] = {}
    for record in records:
        if record.status.is_failure and record.id.startswith(OPINFO_PREFIXES):
            unit_id = UnitId.of(record.id)
            failure = _Failure(record.id, failure_way(record.status, record.details),
                               _VARIANT_USES.get(unit_id.variant()[0],
                                                 PLAIN if unit_id.sample.isdigit() else None))
            failing.setdefault((op_name(unit_id.op), unit_id.dtype), []).append(failure)
    return {where: sorted(tests, key=lambda f: f.test_id) for where, tests in failing.items()}


#: The use of its op that each OpInfo variant's inputs stand for (ids ending in a sample
#: number: ``plain``). A variant missing here tests what no composite's call is judged on.
_VARIANT_USES = {
    "method": PLAIN, "large": PLAIN, "promotion": PLAIN, "arity1": PLAIN, "arity4": PLAIN,
    "arity9": PLAIN, "arity130": PLAIN, "scale": PLAIN,
    "noncontiguous": STRIDED, "expanded": STRIDED,
    "out": OUT, "outresize": OUT,
    "inplace": INPLACE, "inplacestrided": INPLACE,
    "empty": EMPTY,
}


#: Semantic failures that are wrong values caught another way: a repeat that returned the
#: previous call's result (a kernel that never writes its output shows so first).
_VALUE_FAILURES = frozenset({"stale-or-nondeterministic"})


def failure_way(status: Status, details: Mapping[str, Any]) -> str:
    """How a test failed, for matching a composite's failure with a primitive's: wrong values
    (a stale repeat too);
    a semantic failure by its kind (``details.failure``); an exception (ERROR, UNSUPPORTED); a
    dead or hung worker (CRASH, TIMEOUT)."""
    if status is Status.FAIL_SEMANTIC and details.get("failure") not in _VALUE_FAILURES:
        return f"semantic:{details.get('failure', '')}"
    if status is Status.FAIL_SEMANTIC:
        return Status.FAIL_NUMERIC.value.lower()
    if status in (Status.ERROR, Status.UNSUPPORTED):
        return "raises"
    if status in (Status.CRASH, Status.TIMEOUT):
        return "dies"
    return status.value.lower()


def _suspects(record: TestRecord, standard: Standard,
              failing: Mapping[tuple[str, str], list[_Failure]]) -> list[str]:
    """The failing tests of the primitives the record's test calls, those that failed the way
    it did on a use of the op its call makes; a fused kernel's first, then the op with the
    most such failures (ties: first called)."""
    dtype = blame_dtype(record.id) if record.status.is_failure else None
    if dtype is None or not any(where[1] == dtype for where in failing):
        return []
    way = failure_way(record.status, record.details)
    evidence: list[tuple[bool, int, int, list[str]]] = []
    for order, primitive in enumerate(primitives_of(standard, record.id)):
        uses = getattr(primitive, "uses", frozenset({PLAIN}))
        matching = [f.test_id for f in failing.get((str(primitive), dtype), ())
                    if f.way == way and f.use in uses]
        if matching:
            evidence.append((FUSED not in uses, -len(matching), order, matching))
    ranked = [test for *_, tests in sorted(evidence) for test in tests]
    return list(dict.fromkeys(ranked))[:MAX_SUSPECTS]


def blame_dtype(test_id: str) -> str | None:
    """The dtype whose failing OpInfo tests ``test_id`` may fail through (its tier says), or
    None: no tier blames anything for it."""
    tier = find_tier(test_id)
    return tier.blame_dtype(test_id) if tier is not None else None


def primitives_of(standard: Standard, test_id: str) -> tuple[str, ...]:
    """The ATen ops the test calls on CPU, in first-call order (traced once per run)."""
    return _traced(standard.version, test_id)


@functools.lru_cache(maxsize=1024)
def _traced(version: str, test_id: str) -> tuple[str, ...]:
    from kit.standard import load_standard

    tier = find_tier(test_id)
    return tier.primitives(load_standard(version), test_id) if tier is not None else ()


def op_name(op_key: str) -> str:
    """The ATen name an OpInfo op key calls: ``max.reduction_with_dim`` -> ``max``,
    ``nn.functional.gelu`` -> ``gelu``."""
    return op_key.removeprefix("nn.functional.").split(".")[0]


def check_suspects(records: Sequence[RecordFields]) -> str | None:
    """The first record whose suspects are not failing OpInfo tests of its dtype, or None."""
    failing: set[str] | None = None  # made at the first record naming suspects: most have none
    for record in records:
        suspects = record.details.get(SUSPECTS)
        if suspects is None:
            continue
        if failing is None:
            failing = {r.id for r in records
                       if r.status in FAILURE_STATUSES and r.id.startswith(OPINFO_PREFIXES)}
        dtype = blame_dtype(record.id)
        if dtype is None or not isinstance(suspects, list) or not all(
            isinstance(s, str) and s in failing and _dtype_of(s) == dtype for s in suspects
        ):
            return (f"{record.id}: details.suspects names tests that are not failing "
                    "OpInfo tests of its dtype")
    return None


def _dtype_of(test_id: str) -> str | None:
    """The dtype of a unit id a report names (None for an id of another form: a report is
    read as hostile input)."""
    unit_id = UnitId.read(test_id)
    return None if unit_id is None else unit_id.dtype
