"""Read-only helpers the file formats share to present a built report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kit.patterns import matches
from kit.results import FAILURE_STATUSES, NOT_RUN_STATUSES, Status

FAILURES = frozenset(s.value for s in FAILURE_STATUSES)


def records(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(report["records"])


def failing(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [r for r in records(report) if r["status"] in FAILURES]


def skip_entry(report: Mapping[str, Any], test_id: str) -> Mapping[str, Any] | None:
    """The manifest entry that skipped ``test_id``: the first matching one, as the runner chose."""
    for entry in report["skip_manifest"]["entries"]:
        if matches(test_id, entry["test"]):
            return entry  # type: ignore[no-any-return]
    return None


def skip_reason(report: Mapping[str, Any], record: Mapping[str, Any]) -> str:
    """Why a SKIPPED / NOT_APPLICABLE test did not run; empty for tests that ran."""
    if record["status"] == Status.SKIPPED.value:
        entry = skip_entry(report, record["id"])
        if entry is not None:
            return f"{entry['reason']} ({entry['tracking']}, expires {entry['expires']})"
    if record["status"] in NOT_RUN_STATUSES:
        reason = record["details"].get("reason")
        return str(reason) if reason else record["message"]
    return ""


def outcome_text(record: Mapping[str, Any]) -> str:
    """``STATUS: message`` as failure messages show it."""
    message = record["message"]
    return f"{record['status']}: {message}" if message else record["status"]


def detail_text(value: Any) -> str:
    """A detail value as a table cell: empty when absent, floats in their exact repr."""
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def grade_name(report: Mapping[str, Any]) -> str:
    return str(report["grade"]["name"])


def kit_released(report: Mapping[str, Any]) -> bool:
    return bool(report["kit"]["released"])
