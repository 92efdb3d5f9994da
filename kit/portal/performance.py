"""A release's model performance page: each vendor's latest figures, and their trends.

Recorded, not graded (``kit.tiers.models.performance``): the page changes no verdict. The table
holds each model test's median latency and throughput from each vendor's latest audited result
of the release (the one the gate judged). The plots draw each model's median latency per run,
one line per vendor, and a vendor's line joins only the runs comparable with its latest result:
the same host description (``kit.host``), kit version and standard. Every other run of the
release is listed with why it was left out, so a faster machine is never read as a speed-up.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from kit.errors import InputError
from kit.host import HostDescription, host_of
from kit.printable import printable
from kit.report.figures import figure_text
from kit.report.id_order import in_natural_order
from kit.report.model import Report
from kit.tiers.models.performance import PerformanceFigures
from kit.views.performance import figure_cells, measured_tests

#: Colours a vendor's line and points take, by its place in the release's order (the CSS's
#: ``vendor-<n>`` classes; a ninth vendor takes the first colour again).
PALETTE_SIZE = 8


@dataclass(frozen=True)
class PerformanceRun:
    """An audited, non-canary result of a vendor, as the page needs it."""

    report: Report
    #: Its submission's page, relative to the site root.
    page: str
    run_id: str


@dataclass(frozen=True)
class PerformanceVendor:
    """A vendor of the release: its results oldest first and the latest the gate judged."""

    vendor: str
    name: str
    page: str
    runs: tuple[PerformanceRun, ...]
    latest: PerformanceRun | None


@dataclass(frozen=True)
class FigureCell:
    latency: str
    throughput: str
    #: Hover text: spread, peak memory, status, or why there is no figure.
    title: str


@dataclass(frozen=True)
class PerformanceRow:
    test: str
    #: One per vendor, in the release's order.
    cells: tuple[FigureCell, ...]


@dataclass(frozen=True)
class LeftOut:
    """A run of the release not joined to its vendor's line, and why."""

    vendor: str
    run_id: str
    page: str
    why: str


@dataclass(frozen=True)
class VendorColumn:
    vendor: str
    name: str
    page: str
    #: The latest result's host, in words (or that there is no result, or no description).
    host: str
    #: How many of its runs its lines join.
    joined: int
    colour: int


@dataclass(frozen=True)
class PlotPoint:
    x: str
    y: str
    title: str
    page: str


@dataclass(frozen=True)
class PlotLine:
    name: str
    colour: int
    polyline: str
    points: tuple[PlotPoint, ...]


@dataclass(frozen=True)
class LatencyPlot:
    """One model test's median latency per run, one line per vendor (drawn by the template)."""

    test: str
    lines: tuple[PlotLine, ...]
    #: (y, label) of the axis's lines: zero, half the top and the top, in ms.
    ticks: tuple[tuple[str, str], ...]
    #: (x, label) of the first and last run's dates.
    dates: tuple[tuple[str, str], ...]
    width: int = 360
    height: int = 196
    left: int = 56
    top: int = 26
    plot_width: int = 284
    plot_height: int = 132


@dataclass(frozen=True)
class ReleasePerformance:
    release: str
    page: str
    vendors: tuple[VendorColumn, ...]
    rows: tuple[PerformanceRow, ...]
    plots: tuple[LatencyPlot, ...]
    left_out: tuple[LeftOut, ...]


def performance_page(release: str) -> str:
    return f"performance/{release}.html"


#: A run's figures: test id -> (status, figures).
Figures = dict[str, tuple[str, PerformanceFigures]]


def _figures(run: PerformanceRun) -> Figures:
    """Test id -> (status, figures) of a run; ``InputError`` where its figures are malformed."""
    return {m.test_id: (m.status, m.figures) for m in measured_tests(run.report)}


def _comparable_key(run: PerformanceRun) -> tuple[HostDescription | None, str, str]:
    return host_of(run.report.environment), run.report.kit.version, run.report.standard.version


def left_out_why(run: PerformanceRun, latest: PerformanceRun) -> str | None:
    """Why ``run`` is not joined to the line of ``latest`` (None: it is)."""
    (host, kit, standard), (host_l, kit_l, standard_l) = (_comparable_key(run),
                                                          _comparable_key(latest))
    if host is None or host_l is None:
        if host is not host_l:
            return "no host description recorded (a kit before it) on one of the two runs"
    elif host != host_l:
        return f"another host ({', '.join(host.differences(host_l))} not the same)"
    if kit != kit_l:
        return f"kit {kit}, not the latest result's {kit_l}"
    if standard != standard_l:
        return f"standard {standard}, not the latest result's {standard_l}"
    return None


@dataclass(frozen=True)
class _Joined:
    """A vendor's runs joined on its lines, each with its readable figures."""

    vendor: PerformanceVendor
    colour: int
    runs: tuple[tuple[PerformanceRun, Figures], ...]


def _readable(run: PerformanceRun) -> tuple[Figures, str | None]:
    """A run's figures, or none and why (a signed report's details are the vendor's text)."""
    try:
        return _figures(run), None
    except InputError as exc:
        return {}, f"its figures cannot be read: {exc}"


def setup_why(figures: Figures, latest: Figures) -> str | None:
    """Why figures timed under another worker setup than the latest result's do not join:
    each record's own host (torch threads, usable CPUs), which ``ckit diff`` compares too."""
    hosts = {measured.host for _, measured in figures.values()}
    latest_hosts = {measured.host for _, measured in latest.values()}
    if hosts and latest_hosts and hosts != latest_hosts:
        return "timed with other torch threads or CPUs than the latest result"
    return None


def _join(vendor: PerformanceVendor, colour: int, left: list[LeftOut]) -> _Joined:
    latest = vendor.latest
    latest_figures = _readable(latest)[0] if latest is not None else {}
    joined = []
    for run in vendor.runs:
        figures, unreadable = _readable(run)
        why = unreadable or ("no latest result" if latest is None else
                             left_out_why(run, latest) or setup_why(figures, latest_figures))
        if why is not None:
            left.append(LeftOut(vendor.name, printable(run.run_id), run.page, printable(why)))
            continue
        joined.append((run, figures))
    return _Joined(vendor, colour % PALETTE_SIZE, tuple(joined))


def _cell(entry: tuple[str, PerformanceFigures] | None) -> FigureCell:
    if entry is None:
        return FigureCell("–", "–", "no figures in the latest result")
    status, figures = entry
    latency, spread, throughput, memory = figure_cells(figures)
    if not spread:  # not measured, or no call timed: the reason is the first cell
        return FigureCell("not measured", "–", printable(f"{status}: {latency}"))
    return FigureCell(latency, throughput,
                      printable(f"{status}: spread {spread}; peak memory {memory}"))


def _latest_figures(joined: _Joined) -> Figures:
    latest = joined.vendor.latest
    return next((figures for run, figures in joined.runs if run is latest), {})


def _host_words(vendor: PerformanceVendor) -> str:
    if vendor.latest is None:
        return "no audited result of the release"
    host = host_of(vendor.latest.report.environment)
    return "host not recorded (a kit before it)" if host is None else printable(
        f"host {host.words()}")


def release_performance(release: str, vendors: Sequence[PerformanceVendor]
                        ) -> ReleasePerformance | None:
    """The release's page; None when no result of the release carries figures."""
    left: list[LeftOut] = []
    joined = [_join(vendor, index, left) for index, vendor in enumerate(vendors)]
    latest = [_latest_figures(j) for j in joined]
    tests = in_natural_order({test for figures in latest for test in figures})
    plotted = in_natural_order({test for j in joined for _, figures in j.runs for test in figures})
    if not plotted:
        return None
    rows = tuple(PerformanceRow(printable(test), tuple(_cell(f.get(test)) for f in latest))
                 for test in tests)
    columns = tuple(VendorColumn(j.vendor.vendor, j.vendor.name, j.vendor.page,
                                 _host_words(j.vendor), len(j.runs), j.colour) for j in joined)
    return ReleasePerformance(release, performance_page(release), columns, rows,
                              tuple(latency_plot(test, joined) for test in plotted), tuple(left))


def _finished(run: PerformanceRun) -> dt.datetime:
    return run.report.run.finished_at


def latency_plot(test: str, joined: Sequence[_Joined]) -> LatencyPlot:
    """``test``'s median latency in each joined run, x by when the run finished, y from zero."""
    series = [[(run, figures[test][1].latency_s) for run, figures in j.runs
               if test in figures and figures[test][1].latency_s is not None] for j in joined]
    moments = [_finished(run) for points in series for run, _ in points]
    top = max((latency or 0.0 for points in series for _, latency in points), default=0.0)
    plot = LatencyPlot(printable(test), (), (), ())
    top_ms = (top * 1e3 * 1.1) or 1.0
    first, last = min(moments, default=None), max(moments, default=None)
    span = (last - first).total_seconds() if first and last else 0.0

    def x_of(moment: dt.datetime) -> float:
        if first is None or not span:
            return plot.left + plot.plot_width / 2
        return plot.left + plot.plot_width * (moment - first).total_seconds() / span

    def y_of(ms: float) -> float:
        return plot.top + plot.plot_height * (1 - ms / top_ms)

    lines = []
    for j, points in zip(joined, series, strict=True):
        if not points:
            continue
        drawn = tuple(PlotPoint(
            f"{x_of(_finished(run)):.1f}", f"{y_of((latency or 0.0) * 1e3):.1f}",
            printable(f"{j.vendor.name}, {run.run_id}: {figure_text((latency or 0.0) * 1e3)} ms"),
            run.page) for run, latency in points)
        lines.append(PlotLine(j.vendor.name, j.colour,
                              " ".join(f"{p.x},{p.y}" for p in drawn), drawn))
    ticks = tuple((f"{y_of(ms):.1f}", f"{figure_text(ms)} ms")
                  for ms in (0.0, top_ms / 2, top_ms))
    dates = () if first is None or last is None else tuple(
        (f"{x_of(moment):.1f}", moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M"))
        for moment in dict.fromkeys((first, last)))
    return LatencyPlot(plot.test, tuple(lines), ticks, dates)
