"""Benchmark: a complete certify of each vendor on the current standard, against its cost target.

Issue 38 (item 8) bounds what certifying the broadened standard costs on the project's 2-core
machine: a complete certify of the cpu vendor within 20 minutes, of simnpu within 40
(``TARGET_MINUTES``, the one place these figures are written; README "Benchmarks" quotes them).
For each vendor asked this runs ``ckit run --vendor V --workers N --no-sign`` into a scratch
directory, with no ``--tier`` and no ``--select``: the whole of whatever the current standard
holds today (never a hard-coded count), timed wall-clock, start-up included. It prints one line
per vendor (tests per tier, wall time, grade, target) and exits 1 when a vendor misses its target
or its grade is not conformant. ``--select`` narrows every run to a cheap smoke (the kit's own
test drives it so): a narrowed run is graded partial, so it is judged by the grade its tests
earn, and its wall time, which says nothing of the target, is printed but not judged. Usage:

    .venv/bin/python bench/complete_certify.py [--vendor cpu] [--vendor simnpu] [--workers N]
                                               [--select PATTERN ...] [--json PATH] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# bench/ is this script's directory, hence on sys.path: sibling modules import as modules.
from paired_runs import scratch
from verify_throughput import load_average

from kit.errors import KitError
from kit.host import usable_cpus
from kit.report.read import read_report

#: Issue 38 item 8: a complete certify's wall time on the 2-core machine, in minutes, per vendor.
TARGET_MINUTES: Mapping[str, float] = {"cpu": 20.0, "simnpu": 40.0}
#: The grade a complete certify must reach (and the grade a narrowed run's tests must earn).
REQUIRED_GRADE = "conformant"


@dataclass(frozen=True)
class CertifyFigure:
    vendor: str
    wall_s: float
    #: Tier -> tests the run recorded there (tiers without a test left out).
    tests_per_tier: Mapping[str, int]
    #: The report's grade; for a narrowed run, ``partial`` and the grade its tests earn.
    grade: str
    qualifier: str | None
    earned: str | None
    target_s: float
    #: Whether ``--select`` narrowed the run (its wall time is then not judged).
    narrowed: bool
    run_exit_code: int

    @property
    def grade_met(self) -> bool:
        return (self.earned or self.grade) == REQUIRED_GRADE

    @property
    def target_met(self) -> bool | None:
        """Within the target; None for a narrowed run, whose time says nothing of it."""
        return None if self.narrowed else self.wall_s <= self.target_s

    @property
    def met(self) -> bool:
        return self.grade_met and self.target_met is not False

    def grade_words(self) -> str:
        if self.qualifier is None:
            return self.grade
        return f"{self.grade} ({self.qualifier}: its tests earn {self.earned})"

    def target_words(self) -> str:
        bound = f"target <= {self.target_s / 60:g} min"
        if self.target_met is None:
            return f"{bound} (not judged: a narrowed run)"
        return f"{bound} {'met' if self.target_met else 'MISSED'}"

    def row(self) -> str:
        tiers = ", ".join(f"{tier} {n}" for tier, n in self.tests_per_tier.items())
        total = sum(self.tests_per_tier.values())
        return (f"{self.vendor}: {total} tests ({tiers}) in {self.wall_s:.1f} s "
                f"({self.wall_s / 60:.1f} min), grade {self.grade_words()}, "
                f"{self.target_words()}")

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "tests_per_tier": dict(self.tests_per_tier),
                "grade_met": self.grade_met, "target_met": self.target_met, "met": self.met}


class BenchError(Exception):
    """A run that left no outcome to measure: one line, exit 2."""


def certify(vendor: str, out: Path, workers: int, select: list[str]) -> CertifyFigure:
    """Time one ``ckit run`` of ``vendor`` into ``out`` and read its figures back."""
    command = [sys.executable, "-m", "kit", "run", "--vendor", vendor, "--workers", str(workers),
               "--no-sign", "--json", "--out", str(out)]
    for pattern in select:
        command += ["--select", pattern]
    started = time.monotonic()
    # stderr (the progress bar) goes to the terminal: a complete run takes many minutes.
    done = subprocess.run(command, check=False, stdout=subprocess.PIPE, text=True)
    wall_s = time.monotonic() - started
    try:
        outcome = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise BenchError(f"ckit run --vendor {vendor} printed no outcome "
                         f"(exit {done.returncode})") from None
    try:
        tiers = read_report(out).report.summary.tiers
    except KitError as error:
        raise BenchError(f"ckit run --vendor {vendor} left no report: {error}") from None
    return CertifyFigure(
        vendor=vendor, wall_s=wall_s,
        tests_per_tier={tier: counts.total for tier, counts in tiers.items() if counts.total},
        grade=outcome["grade"], qualifier=outcome["qualifier"], earned=outcome["earned"],
        target_s=TARGET_MINUTES[vendor] * 60, narrowed=bool(select),
        run_exit_code=done.returncode)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vendor", action="append", choices=sorted(TARGET_MINUTES),
                        help=f"repeatable (default: {', '.join(TARGET_MINUTES)})")
    parser.add_argument("--workers", type=int, default=usable_cpus(),
                        help="ckit run's workers (default: this machine's usable cores)")
    parser.add_argument("--select", action="append", default=[], metavar="PATTERN",
                        help="narrow every run (a smoke: its time is not judged)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the figures here")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the runs under DIR")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    vendors: list[str] = args.vendor or list(TARGET_MINUTES)
    started_load = load_average()
    print(f"machine: {usable_cpus()} usable CPU(s), load average {started_load}; "
          f"{args.workers} worker(s)", flush=True)
    figures: list[CertifyFigure] = []
    with scratch(args.keep, "ckit-complete-certify-") as base:
        for vendor in vendors:
            try:
                figures.append(certify(vendor, base / vendor, args.workers, args.select))
            except BenchError as error:
                print(f"complete_certify: {error}", file=sys.stderr)
                return 2
            print(figures[-1].row(), flush=True)
    ended_load = load_average()
    print(f"load average at the end: {ended_load}")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        document = {"workers": args.workers, "usable_cpus": usable_cpus(),
                    "load_average": {"start": started_load, "end": ended_load},
                    "select": args.select, "vendors": [f.to_json() for f in figures]}
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0 if all(figure.met for figure in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main())
