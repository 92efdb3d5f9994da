"""The pull-request comment's failures: one group per op × dtype, with its worst error.

A group is what a reviewer acts on (one kernel in one dtype), so the comment says per group how
many tests failed and how, the worst ratio of an error to its bound (``figure_text``: 3
significant digits) and one example id to rerun, instead of one line of raw floats per test.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kit.report.figures import figure_text, figure_value
from kit.report.id_order import in_natural_order
from kit.report.op_dtype import group_key

#: The figure a group's worst test is chosen by, then those that break its ties.
_RANKED_BY = ("ratio_to_bound", "max_rel_err", "max_abs_err")


@dataclass(frozen=True)
class FailingTest:
    test_id: str
    #: Its status, or ``MISSING``.
    status: str
    details: Mapping[str, Any]


@dataclass(frozen=True)
class CommentGroup:
    op: str
    dtype: str
    statuses: Mapping[str, int]
    #: The test with the largest ratio to its bound (then relative, absolute error).
    worst: FailingTest

    @property
    def count(self) -> int:
        return sum(self.statuses.values())


def _rank(test: FailingTest) -> tuple[float, ...]:
    values = (figure_value(test.details.get(key)) for key in _RANKED_BY)
    return tuple(-1.0 if value is None else value for value in values)


def comment_groups(failing: Iterable[FailingTest]) -> list[CommentGroup]:
    """One group per (op, dtype), most failures first, then by op and dtype; each group's
    worst test is the first in natural id order among equals."""
    by_id = {test.test_id: test for test in failing}
    grouped: dict[tuple[str, str], list[FailingTest]] = {}
    for test_id in in_natural_order(by_id):
        grouped.setdefault(group_key(test_id), []).append(by_id[test_id])
    groups = [
        CommentGroup(op, dtype, dict(sorted(Counter(t.status for t in tests).items())),
                     max(tests, key=_rank))  # max keeps the first of equals
        for (op, dtype), tests in grouped.items()
    ]
    return sorted(groups, key=lambda g: (-g.count, g.op, g.dtype))


def worst_words(test: FailingTest) -> str:
    """``worst ratio to bound 1.05e+04`` (else the relative error), or "" without figures."""
    for key, words in (("ratio_to_bound", "worst ratio to bound"),
                       ("max_rel_err", "worst max_rel_err")):
        if figure_value(test.details.get(key)) is not None:
            return f"{words} {figure_text(test.details[key])}"
    return ""
