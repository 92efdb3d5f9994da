"""``tier_status_counts``: a report's records (sorted by id) counted a tier's run at a time give
the counts the one-by-one count gives, whatever the ids look like."""

from __future__ import annotations

import collections
import random

from kit.report.summary import tier_status_counts
from kit.results import Status, TestRecord, tier_of

#: Ids that sort between or around a tier's run: a tier name alone, a sibling that shares its
#: start (``unit-x``, ``unit0``), an empty segment, the empty id.
AWKWARD_IDS = ("unit", "unit-x/a", "unit/", "unit//a", "unit/a", "unit/b/c", "unit0", "u",
               "flows/x", "models/hf/m", "", "zz/1", "unit/a/b")


def one_by_one(records: list[TestRecord]) -> collections.Counter[tuple[str, Status]]:
    return collections.Counter((tier_of(r.id), r.status) for r in records)


def awkward_records() -> list[TestRecord]:
    statuses = list(Status)
    return [TestRecord(test_id, statuses[n % len(statuses)])
            for n, test_id in enumerate(AWKWARD_IDS * 2)]


def test_sorted_records_counted_by_runs_as_one_by_one() -> None:
    records = sorted(awkward_records(), key=lambda r: r.id)
    counted = tier_status_counts(records)
    assert counted == one_by_one(records)
    assert counted["unit", Status.PASS] + counted["unit", Status.FAIL_NUMERIC] > 0
    assert "unit-x" in {tier for tier, _ in counted}


def test_unsorted_records_counted_one_by_one() -> None:
    records = awkward_records()
    random.Random(7).shuffle(records)
    assert tier_status_counts(records) == one_by_one(records)
    assert tier_status_counts(()) == collections.Counter()
