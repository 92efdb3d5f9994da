"""A vendor's pass rate over its audited results, drawn as SVG by the vendor page's template.

Only comparable results are joined by a line: runs of the same selection (standard, tiers and
``--select``), whose pass rates count the same tests. A run of another selection is a point of
a series of its own, and every point says how many tests it counted and links its submission,
so a rate over 193 tests is never read as the next step of one over 248.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from kit.repository.gate import percent


@dataclass(frozen=True)
class TrendResult:
    """One audited result as the plot needs it (oldest first in the sequence given)."""

    page: str
    kit_version: str
    finished: str
    #: Overall pass rate counting missing tests as failed; None when nothing ran.
    rate: float | None
    tests: int
    #: What makes two results comparable: the same text, the same selection.
    selection: str


@dataclass(frozen=True)
class TrendPoint:
    x: str
    y: str
    label: str
    rate: str
    #: The submission's page, relative to the site root.
    page: str
    #: Which series (line) the point is on: one per selection.
    series: int


@dataclass(frozen=True)
class TrendSeries:
    selection: str
    polyline: str
    points: int


@dataclass(frozen=True)
class Trend:
    """A pass-rate-over-time plot's numbers; the template draws them as SVG."""

    width: int = 640
    height: int = 230
    left: int = 96
    top: int = 16
    plot_width: int = 448
    plot_height: int = 150
    #: The pass rate at the bottom of the y axis: rates sit near 100%, so the axis starts at
    #: the tenth below the lowest one, where differences show.
    floor: float = 0.0
    points: tuple[TrendPoint, ...] = ()
    series: tuple[TrendSeries, ...] = ()

    def y_of(self, rate: float) -> str:
        share = (rate - self.floor) / (1 - self.floor)
        return f"{self.top + self.plot_height * (1 - share):.1f}"

    @property
    def ticks(self) -> tuple[tuple[str, str], ...]:
        """(y, label) of the axis's bottom, middle and top lines."""
        rates = (self.floor, (self.floor + 1) / 2, 1.0)
        return tuple((self.y_of(rate), f"{rate:.0%}") for rate in rates)


def _series_of(results: Sequence[TrendResult]) -> dict[str, int]:
    """Each selection's series number, in the order the selections first appear."""
    numbers: dict[str, int] = {}
    for result in results:
        numbers.setdefault(result.selection, len(numbers))
    return numbers


def trend(results: Sequence[TrendResult]) -> Trend:
    """Each audited result's overall pass rate, oldest first, one step apart on the x axis;
    a line joins only the results of one selection."""
    rates = [result.rate or 0.0 for result in results]
    plot = Trend(floor=min(math.floor(min(rates, default=1.0) * 10) / 10, 0.9))
    step = plot.plot_width / max(len(results) - 1, 1)
    numbers = _series_of(results)
    points = []
    for index, (result, rate) in enumerate(zip(results, rates, strict=True)):
        x = plot.left + (step * index if len(results) > 1 else plot.plot_width / 2)
        points.append(TrendPoint(
            x=f"{x:.1f}",
            y=plot.y_of(rate),
            label=f"kit {result.kit_version}, {result.finished[:10]}, {result.tests} tests",
            rate="–" if result.rate is None else percent(result.rate),
            page=result.page,
            series=numbers[result.selection],
        ))
    series = tuple(
        TrendSeries(selection, " ".join(f"{p.x},{p.y}" for p in points if p.series == number),
                    sum(1 for p in points if p.series == number))
        for selection, number in numbers.items()
    )
    return dataclasses.replace(plot, points=tuple(points), series=series)
