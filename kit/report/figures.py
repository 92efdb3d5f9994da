"""The error figures a record keeps (``max_abs_err``, ``max_rel_err``, ...), for ranking and diffs.

A record's details come from the run, so a figure may be a number, one of the words the kit
writes for unbounded errors (``"inf"``, ``"nan"``), or anything else; only the first two rank.
People read a figure through ``figure_text`` (every text view: ``ckit show``, ``ckit diff``, the
pull-request comment, summary.md, the portal); the report and ``--json`` keep it as recorded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kit.results import TestRecord

#: The figures shown and compared, in the order shown.
FIGURE_KEYS = ("max_abs_err", "max_rel_err", "max_ulps", "ratio_to_bound")
_WORDS = {"inf": math.inf, "nan": math.nan}
#: Digits a figure keeps for people: enough to compare errors and bounds at a glance.
SIGNIFICANT_DIGITS = 3
#: Integers below this (a count of ulps) read exactly; larger ones are rounded like floats.
_EXACT_INTEGERS_BELOW = 10**6


def figure_value(value: Any) -> float | None:
    """``value`` as a float to rank by (NaN ranks as infinite: it is the worst error), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and value in _WORDS:
        number = _WORDS[value]
    else:
        return None
    return math.inf if math.isnan(number) else number


def figure_text(value: object) -> str:
    """A figure as people read it: a number to ``SIGNIFICANT_DIGITS`` significant digits
    (``1e+297``, ``1.05e+04``, ``0.000123``), anything else (the kit's words) as recorded; the
    one rounding of every human view, never of what a report or ``--json`` keeps."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int) and abs(value) < _EXACT_INTEGERS_BELOW:
        return str(value)
    return f"{value:.{SIGNIFICANT_DIGITS}g}"


@dataclass(frozen=True)
class Figures:
    """The figures one record holds, as recorded (numbers or the kit's words)."""

    values: Mapping[str, float | int | str]

    def to_json(self) -> dict[str, float | int | str]:
        return dict(self.values)

    def rank(self) -> tuple[float, float]:
        """Largest relative error first, then largest absolute error."""
        rel = figure_value(self.values.get("max_rel_err"))
        abs_ = figure_value(self.values.get("max_abs_err"))
        return (rel if rel is not None else -1.0, abs_ if abs_ is not None else -1.0)

    def text(self) -> str:
        """The figures for people, each rounded by ``figure_text``."""
        return "  ".join(f"{key} {figure_text(value)}" for key, value in self.values.items())


def figures_of(record: TestRecord) -> Figures | None:
    """The record's error figures; None when it holds none that rank."""
    found = {
        key: record.details[key]
        for key in FIGURE_KEYS
        if figure_value(record.details.get(key)) is not None
    }
    return Figures(found) if found else None

