"""The op and dtype a test id names, for results.csv's columns and summary.md's failure groups.

Unit ids are ``unit/<family>/<op>/<dtype>/<case...>`` (``opinfo`` and ``opspec`` alike); the
flows tier's are the same behind the flow, ``flows/<flow>/<family>/<op>/<dtype>/<case...>``;
the other tiers' ids name no op or dtype.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kit.report.figures import figure_value
from kit.tiers.registry import find_tier


def op_and_dtype_of(test_id: str) -> tuple[str, str]:
    """``unit/opspec/conv2d/bfloat16/nchw/0`` -> (``conv2d``, ``bfloat16``); ("", "") elsewhere."""
    tier = find_tier(test_id)
    found = tier.op_and_dtype(test_id) if tier is not None else None
    return found or ("", "")


def group_key(test_id: str) -> tuple[str, str]:
    """The failure group of a test: ``unit/<family>/<op>`` (``flows/<flow>/<family>/<op>``) and
    its dtype, or the id alone."""
    tier = find_tier(test_id)
    group = tier.op_group(test_id) if tier is not None else None
    if group is None:
        return test_id, ""
    return group, op_and_dtype_of(test_id)[1]


@dataclass(frozen=True)
class FailureGroup:
    """The failing records of one op in one dtype."""

    op: str
    dtype: str
    statuses: Mapping[str, int]
    #: The record with the largest error (relative, then absolute), else the first one.
    worst: Mapping[str, Any]

    @property
    def count(self) -> int:
        return sum(self.statuses.values())


def _error_rank(record: Mapping[str, Any]) -> tuple[float, float]:
    details = record.get("details", {})
    rel = figure_value(details.get("max_rel_err"))
    abs_ = figure_value(details.get("max_abs_err"))
    return (rel if rel is not None else -1.0, abs_ if abs_ is not None else -1.0)


def group_failures(
    failing: Sequence[Mapping[str, Any]],
    rank: Callable[[Mapping[str, Any]], tuple[float, ...]] = _error_rank,
) -> list[FailureGroup]:
    """One group per (op, dtype), most failures first, then by op and dtype; each group's
    worst record the first of the highest ``rank`` (summary.md's: relative, then absolute
    error), in ``failing``'s order."""
    grouped: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for record in failing:
        grouped.setdefault(group_key(record["id"]), []).append(record)
    groups = [
        FailureGroup(
            op,
            dtype,
            dict(sorted(Counter(r["status"] for r in records).items())),
            max(records, key=rank),  # max keeps the first of equals
        )
        for (op, dtype), records in grouped.items()
    ]
    return sorted(groups, key=lambda g: (-g.count, g.op, g.dtype))
