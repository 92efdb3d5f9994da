"""The model tier's performance figures for people: ``ckit show``'s table, ``ckit diff``'s ratios.

Recorded, not graded (``kit.tiers.models.performance``): nothing here changes a grade or an exit
code. ``ckit diff`` compares each model's median latency, B over A, and flags a change of at
least ``THRESHOLD`` (x1.25 slower, or faster by as much) whose interquartile ranges do not
overlap, so a noisy machine's jitter is not called a regression. Figures measured on different
hosts (the reports' host descriptions, ``kit.host``: CPU model, CPUs, device count and name; and
each record's own: threads too), of another kind or batch, or without a timed call are shown with
the reason and never flagged: they do not compare.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kit.host import host_of
from kit.report.figures import figure_text
from kit.report.id_order import natural_id_key
from kit.report.model import Report
from kit.tiers.models.performance import (
    TIME_CAP_S,
    TIMED_ITERATIONS,
    WARMUP_ITERATIONS,
    Host,
    PerformanceFigures,
    performance_of,
)

#: The factor of median latency past which ``ckit diff`` flags a model slower (or faster, by its
#: inverse), when the two runs' interquartile ranges do not overlap either.
THRESHOLD = 1.25


@dataclass(frozen=True)
class MeasuredTest:
    """One record's figures, with its status (a failing model's figures are still recorded)."""

    test_id: str
    status: str
    figures: PerformanceFigures


def measured_tests(report: Report) -> tuple[MeasuredTest, ...]:
    """The records that carry figures, in natural id order."""
    found = [MeasuredTest(r.id, r.status.value, figures) for r in report.records
             if (figures := performance_of(r)) is not None]
    return tuple(sorted(found, key=lambda m: natural_id_key(m.test_id)))


# -- ckit show -------------------------------------------------------------------------------

def figure_cells(figures: PerformanceFigures) -> list[str]:
    """Latency, spread, throughput and peak memory as text; the reason where one is missing."""
    latency, throughput, spread = figures.latency_s, figures.throughput, figures.spread
    if figures.problem is not None:
        return [f"not measured: {figures.problem}", "", "", ""]
    if latency is None or throughput is None or spread is None:
        return [f"no call timed within the {figure_text(TIME_CAP_S)} s cap", "", "", ""]
    qualified = ", ".join(word for word in (
        "noisy" if figures.noisy else "",
        "unsynchronised" if figures.synchronize is None else "",
        f"capped at {len(figures.latencies_s)} calls" if figures.capped else "") if word)
    return [f"{figure_text(latency * 1e3)} ms",
            f"±{figure_text(spread * 100)}%" + (f" ({qualified})" if qualified else ""),
            f"{figure_text(throughput)}/s", memory_text(figures)]


def memory_text(figures: PerformanceFigures) -> str:
    if figures.peak_memory_bytes is None:
        return figures.memory
    return f"{figure_text(figures.peak_memory_bytes / 2**20)} MiB"


def performance_lines(report: Report, limit: int) -> list[str]:
    """``ckit show``'s table of the model tier's figures; nothing for a report without them."""
    measured = measured_tests(report)
    if not measured:
        return []
    lines = [f"performance (model tier; recorded, not graded): median of {TIMED_ITERATIONS} "
             f"calls after {WARMUP_ITERATIONS} warm-up, at most {figure_text(TIME_CAP_S)} s a "
             "model; spread is the interquartile range over the median",
             *(f"  host: {host.words()} (the report's environment)"
               for host in (host_of(report.environment),) if host is not None),
             *(f"  host: {host_words(host)}" for host in _hosts(measured))]
    rows = [["test", "status", "latency", "spread", "throughput", "peak memory"]] + [
        [m.test_id, m.status, *figure_cells(m.figures)] for m in measured[:limit]]
    lines += ["  " + line for line in _table(rows)]
    if len(measured) > limit:
        lines.append(f"  ... and {len(measured) - limit} more (--limit, or --json)")
    return lines


def performance_json(report: Report) -> list[dict[str, Any]]:
    """``ckit show --json``'s figures: as recorded, with the derived statistics."""
    return [{"id": m.test_id, "status": m.status, "latency_s": m.figures.latency_s,
             "spread": m.figures.spread, "throughput_per_s": m.figures.throughput,
             "noisy": m.figures.noisy, "figures": m.figures.to_json()}
            for m in measured_tests(report)]


def host_words(host: Host) -> str:
    return (f"{host.cpu_model}, {host.usable_cpus} of {host.cpu_count} CPUs, "
            f"{host.threads} thread(s), {host.device_count} device(s)")


def _hosts(measured: Iterable[MeasuredTest]) -> list[Host]:
    hosts: list[Host] = []
    for m in measured:
        if m.figures.host not in hosts:
            hosts.append(m.figures.host)
    return hosts


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows]


# -- ckit diff -------------------------------------------------------------------------------

@dataclass(frozen=True)
class PerformanceChange:
    """One model test's figures in both runs."""

    test_id: str
    before: PerformanceFigures
    after: PerformanceFigures
    #: The fields of the two reports' host descriptions that differ (``kit.host``); empty when
    #: none does, or a report predates the description (its records' hosts still decide).
    host_differences: tuple[str, ...] = ()

    @property
    def ratio(self) -> float | None:
        """B's median latency over A's; None when either has no timed call."""
        a, b = self.before.latency_s, self.after.latency_s
        return b / a if a and b is not None else None

    @property
    def not_comparable(self) -> str | None:
        """Why the two figures do not compare, in words; None when they do."""
        if self.ratio is None:
            return "no timed call on one side"
        if self.host_differences:
            return (f"measured on different hosts ({', '.join(self.host_differences)} "
                    "not the same)")
        if self.before.host != self.after.host:
            return "measured on different hosts"
        if (self.before.kind, self.before.batch) != (self.after.kind, self.after.batch):
            return "another kind of call or batch"
        return None

    @property
    def flag(self) -> str | None:
        """``slower`` or ``faster`` past ``THRESHOLD`` and beyond both runs' spread; else None."""
        ratio, before, after = self.ratio, self.before.quartiles, self.after.quartiles
        if self.not_comparable or ratio is None or before is None or after is None:
            return None
        if ratio >= THRESHOLD and after[0] > before[1]:
            return "slower"
        if ratio <= 1 / THRESHOLD and after[1] < before[0]:
            return "faster"
        return None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.test_id, "a_latency_s": self.before.latency_s,
                "b_latency_s": self.after.latency_s, "ratio": self.ratio, "flag": self.flag,
                "not_comparable": self.not_comparable,
                "host_differences": list(self.host_differences)}

    def text(self) -> str:
        a, b, ratio = self.before.latency_s, self.after.latency_s, self.ratio
        if a is None or b is None or ratio is None:
            return f"{self.test_id}: not compared ({self.not_comparable})"
        said = self.not_comparable or self.flag
        return (f"{self.test_id}: x{figure_text(ratio)} ({figure_text(a * 1e3)} ms -> "
                f"{figure_text(b * 1e3)} ms)" + (f" {said}" if said else ""))


def performance_changes(a: Report, b: Report, compared: set[str]) -> tuple[PerformanceChange, ...]:
    """The figures of every compared test both runs measured, the largest change first."""
    before = {m.test_id: m.figures for m in measured_tests(a) if m.test_id in compared}
    after = {m.test_id: m.figures for m in measured_tests(b) if m.test_id in compared}
    hosts = report_host_differences(a, b)
    changes = [PerformanceChange(i, before[i], after[i], hosts)
               for i in before.keys() & after.keys()]
    return tuple(sorted(changes, key=lambda c: (_size(c), natural_id_key(c.test_id))))


def report_host_differences(a: Report, b: Report) -> tuple[str, ...]:
    """What differs between two reports' hosts; nothing where either records no description."""
    before, after = host_of(a.environment), host_of(b.environment)
    return () if before is None or after is None else before.differences(after)


def _size(change: PerformanceChange) -> tuple[int, float]:
    # Flagged first, then comparable ones by how far the ratio is from 1, then the rest.
    ratio = change.ratio
    distance = abs(math.log(ratio)) if ratio else 0.0
    return (0 if change.flag else 1 if not change.not_comparable else 2), -distance


def performance_diff_lines(changes: tuple[PerformanceChange, ...], limit: int) -> list[str]:
    """``ckit diff``'s section: each model's ratio, the flagged ones first."""
    if not changes:
        return []
    flagged = sum(1 for c in changes if c.flag)
    lines = [f"performance (median latency B/A; recorded, not graded; flagged at x"
             f"{figure_text(THRESHOLD)} or 1/{figure_text(THRESHOLD)} beyond both runs' "
             f"spread): {flagged} flagged of {len(changes)}"]
    lines += [f"  {change.text()}" for change in changes[:limit]]
    if len(changes) > limit:
        lines.append(f"  ... and {len(changes) - limit} more (--limit, or --json)")
    return lines


def performance_comment_lines(changes: tuple[PerformanceChange, ...], limit: int,
                              code: Callable[[str], str]) -> list[str]:
    """The pull-request comment's largest changes against its baseline (markdown; ``code``
    makes an id an inert code span): flagged first, then the largest comparable ratios."""
    shown = [change for change in changes if not change.not_comparable][:limit]
    if not shown:
        return []
    flagged = sum(1 for change in changes if change.flag)
    lines = ["", f"Model performance against the baseline (recorded, not graded; median "
                 f"latency B/A, flagged at x{figure_text(THRESHOLD)} beyond both runs' spread): "
                 f"{flagged} flagged."]
    for change in shown:
        a, b = change.before.latency_s or 0.0, change.after.latency_s or 0.0
        flag = f" **{change.flag}**" if change.flag else ""
        lines.append(f"- {code(change.test_id)}{flag}: x{figure_text(change.ratio)} "
                     f"({figure_text(a * 1e3)} ms -> {figure_text(b * 1e3)} ms)")
    return lines
