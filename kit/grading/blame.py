"""Blame: a failing composite test names the failing primitive tests it may be failing through.

An op spec (``unit/opspec/<template>/<dtype>/<case>``) or a model on the device's eager path
(``models/<source>/<model>/eager``, float32) calls several ATen ops; when one of them is broken,
it fails along with that op's own OpInfo tests. Where a failing test used (traced once on CPU,
``kit.aten_trace``) an op whose OpInfo tests fail in the same dtype, its record's
``details.suspects`` lists those failing test ids, and ``ckit show`` groups the failures by
suspected root. Which tests blame and what they call is their tier's answer
(``Tier.blame_dtype``, ``Tier.primitives``).

Computed when the report is built, from the records and the standard alone (deterministic).
Suspects are advisory: they change no status, count or grade. Verification checks that each is
a failing OpInfo test of the report in the record's dtype (``check_suspects``) without tracing
again.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from kit.results import Status, TestRecord
from kit.standard import Standard
from kit.tiers.registry import find_tier

OPINFO_PREFIX = "unit/opinfo/"
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


def _failing_opinfo(records: Iterable[TestRecord]) -> dict[tuple[str, str], list[str]]:
    """(op name, dtype) -> failing OpInfo test ids, sorted."""
    failing: dict[tuple[str, str], list[str]] = {}
    for record in records:
        if record.status.is_failure and record.id.startswith(OPINFO_PREFIX):
            _, _, key, dtype, _ = record.id.split("/", 4)
            failing.setdefault((op_name(key), dtype), []).append(record.id)
    return {where: sorted(ids) for where, ids in failing.items()}


def _suspects(record: TestRecord, standard: Standard,
              failing: Mapping[tuple[str, str], list[str]]) -> list[str]:
    dtype = blame_dtype(record.id) if record.status.is_failure else None
    if dtype is None or not any(where[1] == dtype for where in failing):
        return []
    used = primitives_of(standard, record.id)
    found = [test for name in used for test in failing.get((name, dtype), ())]
    return found[:MAX_SUSPECTS]


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


def check_suspects(records: Sequence[Mapping[str, Any]]) -> str | None:
    """The first record whose suspects are not failing OpInfo tests of its dtype, or None."""
    failing = {r["id"] for r in records
               if r["id"].startswith(OPINFO_PREFIX) and _is_failure(r.get("status"))}
    for record in records:
        suspects = (record.get("details") or {}).get(SUSPECTS)
        if suspects is None:
            continue
        dtype = blame_dtype(record["id"]) if isinstance(record["id"], str) else None
        if dtype is None or not isinstance(suspects, list) or not all(
            isinstance(s, str) and s in failing and s.split("/")[3] == dtype for s in suspects
        ):
            return (f"{record['id']}: details.suspects names tests that are not failing "
                    "OpInfo tests of its dtype")
    return None


def _is_failure(status: Any) -> bool:
    try:
        return Status(status).is_failure
    except ValueError:
        return False
