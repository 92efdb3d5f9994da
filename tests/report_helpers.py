"""Shared data for the report tests (imported by the tests and by this directory's conftest)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from kit.results import Status, TestRecord
from kit.tiers.registry import tier_names

TODAY = dt.date(2026, 11, 22)

# Required under v1 ("unit/*/*/float32/*"), and never-skip ("unit/opinfo/add/float32/*").
REQUIRED_NEVER_SKIP = "unit/opinfo/add/float32/0"
# Required under v1 but skippable.
REQUIRED = "unit/opinfo/sin/float32/0"
# Neither required nor never-skip.
OPTIONAL = "unit/opinfo/sin/float64/0"


def run_info(complete: bool = True, **changes: Any) -> dict[str, Any]:
    run: dict[str, Any] = {
        "tiers": list(tier_names()),
        "select": [],
        "timeout_s": 60.0,
        "started_at": "2026-11-22T10:00:00+00:00",
        "finished_at": "2026-11-22T10:05:00+00:00",
        "workers": 2,
        "complete": complete,
    }
    run.update(changes)
    return run


def skip_entry(test: str, expires: str = "2027-03-31", reason: str = "precision") -> dict[str, str]:
    return {
        "test": test,
        "reason": reason,
        "tracking": "https://tracker.example.org/issues/42",
        "expires": expires,
    }


def passing(*ids: str) -> list[TestRecord]:
    return [TestRecord(test_id, Status.PASS, 0.25) for test_id in ids]


def baseline_records() -> list[TestRecord]:
    """A small run in which every test passes."""
    return passing(
        "deploy/import/0",
        REQUIRED_NEVER_SKIP,
        REQUIRED,
        OPTIONAL,
        "models/hf/bert/eager",
    )
