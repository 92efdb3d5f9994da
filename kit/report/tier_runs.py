"""A report's ids a tier at a time: its records are sorted by id, so each tier's records are
one run of them, found by bisection, and a whole run's records are counted or checked a tier's
run at a time, in C, with no call per record (``kit.report.summary.tier_status_counts``, the
verifier's step 9)."""

from __future__ import annotations

import operator
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice

from kit.test_ids import SEPARATOR, tier_of

#: The character after the separator: every id from ``<tier>/`` up to ``<tier>`` and it
#: starts ``<tier>/``.
AFTER_SEPARATOR = chr(ord(SEPARATOR) + 1)


@dataclass(frozen=True)
class TierRun:
    """``ids[start:stop]``: those of ``tier`` (``tier_of``), each ``<tier>/...``; or an id
    without a separator alone (``start + 1 == stop``, its own tier)."""

    tier: str
    start: int
    stop: int


def tier_runs(ids: Sequence[str]) -> list[TierRun] | None:
    """``ids``, in sorted order, as each tier's run; None where they are not sorted."""
    if not all(map(operator.le, ids, islice(ids, 1, None))):
        return None
    runs = []
    start = 0
    while start < len(ids):
        tier = tier_of(ids[start])
        stop = (start + 1 if ids[start] == tier
                else bisect_left(ids, f"{tier}{AFTER_SEPARATOR}", start))
        runs.append(TierRun(tier, start, stop))
        start = stop
    return runs
