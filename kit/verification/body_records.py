"""Step 9's question of a body's records, asked of all of them at once: does each hold what
the report schema says beyond its fields' types (a status of the standard, a test id of its
own tier, ``details.na_reason`` absent or a string)?

A whole run's records are asked in C, a tier's run of them at a time
(``kit.report.tier_runs``), with no call per record; the verifier names the first record
refused by asking them one by one (``kit.verification.body_content._record_problem``) only
where this says one is, or where the records are not in a report's order.
"""

from __future__ import annotations

import operator
from bisect import bisect_left
from collections.abc import Collection, Sequence
from itertools import repeat

from kit.report.body import BodyRecord
from kit.report.tier_runs import AFTER_SEPARATOR, TierRun, tier_runs
from kit.results import NA_REASON_KEY, Status
from kit.test_ids import SEPARATOR

_ID = operator.attrgetter("id")
_TIER = operator.attrgetter("tier")
_STATUS = operator.attrgetter("status")
_DETAILS = operator.attrgetter("details")
#: What ``details.na_reason`` may be: absent, or a string (JSON gives no subclass of one).
_REASON_TYPES = frozenset({str, type(None)})


def records_sound(records: Sequence[BodyRecord], statuses: Collection[Status],
                  tiers: Collection[str]) -> bool:
    """Whether every record's status is one of ``statuses``, its tier one of ``tiers`` whose
    test id it is (``<tier>/`` and a segment, not an empty one), and its ``details.na_reason``
    absent or a string; False too where the records are not sorted by id (ask one by one)."""
    if not set(map(_STATUS, records)) <= set(statuses):
        return False
    reasons = map(dict.get, map(_DETAILS, records), repeat(NA_REASON_KEY))
    if not set(map(type, reasons)) <= _REASON_TYPES:
        return False
    ids = list(map(_ID, records))
    runs = tier_runs(ids)
    return runs is not None and all(_run_sound(records, ids, run, tiers) for run in runs)


def _run_sound(records: Sequence[BodyRecord], ids: Sequence[str], run: TierRun,
               tiers: Collection[str]) -> bool:
    """A tier's run: of a known tier, each id ``<tier>/`` and a segment (the run's first id
    is its least, and those with an empty segment next lie between ``<tier>//`` and
    ``<tier>/`` and the character after the separator), each record filed under it."""
    prefix = f"{run.tier}{SEPARATOR}"
    first = ids[run.start]
    return (run.tier in tiers and first.startswith(prefix) and first != prefix
            and bisect_left(ids, f"{prefix}{SEPARATOR}", run.start, run.stop)
            == bisect_left(ids, f"{prefix}{AFTER_SEPARATOR}", run.start, run.stop)
            and set(map(_TIER, records[run.start:run.stop])) == {run.tier})
