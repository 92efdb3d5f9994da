"""The tests a report's grade counts as failed, as ``ckit show`` lists them and
``--rerun-failed`` reruns them."""

from __future__ import annotations

from kit.report.model import Report


def failing_tests(report: Report) -> dict[str, str]:
    """Test id -> status of every test the grade counts as failed: failing records, and the
    tests without an accepted result (``unaccounted``: missing, or skipped / not applicable
    without a reason the kit accepts)."""
    failing = {r.id: r.status.value for r in report.records if r.status.is_failure}
    for entry in report.unaccounted:
        failing.setdefault(entry.test, entry.status)
    return failing
