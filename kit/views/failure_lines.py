"""The pull-request comment's failures: one group per op × dtype, with its worst error.

A group is what a reviewer acts on (one kernel in one dtype), so the comment says per group how
many tests failed and how, the worst ratio of an error to its bound (``figure_text``: 3
significant digits) and one example id to rerun, instead of one line of raw floats per test.
The groups are summary.md's (``kit.report.op_dtype.group_failures``), the worst test ranked by
its ratio to the bound first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kit.report.figures import figure_text, figure_value
from kit.report.id_order import in_natural_order
from kit.report.op_dtype import FailureGroup, group_failures

#: The figure a group's worst test is chosen by, then those that break its ties.
_RANKED_BY = ("ratio_to_bound", "max_rel_err", "max_abs_err")


def failing_test(test_id: str, status: str, details: Mapping[str, Any]) -> dict[str, Any]:
    """A failing test as a group holds it (a record's id, status and details; ``MISSING``
    for a test without a result)."""
    return {"id": test_id, "status": status, "details": details}


def _rank(test: Mapping[str, Any]) -> tuple[float, ...]:
    values = (figure_value(test["details"].get(key)) for key in _RANKED_BY)
    return tuple(-1.0 if value is None else value for value in values)


def comment_groups(failing: Iterable[Mapping[str, Any]]) -> list[FailureGroup]:
    """One group per (op, dtype), most failures first, then by op and dtype; each group's
    worst test is the first in natural id order among equals."""
    by_id = {test["id"]: test for test in failing}
    return group_failures([by_id[test_id] for test_id in in_natural_order(by_id)], _rank)


def worst_words(test: Mapping[str, Any]) -> str:
    """``worst ratio to bound 1.05e+04`` (else the relative error), or "" without figures."""
    details = test["details"]
    for key, words in (("ratio_to_bound", "worst ratio to bound"),
                       ("max_rel_err", "worst max_rel_err")):
        if figure_value(details.get(key)) is not None:
            return f"{words} {figure_text(details[key])}"
    return ""
