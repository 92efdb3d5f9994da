"""Benchmark: what the isolated runner costs over a bare in-process loop.

Runs the same unit-tier tests twice: (1) a bare loop calling the unit tier's own function in
this process, (2) ``ckit run --tier unit`` (worker processes that only execute, judge processes
that compare apart from the vendor's code, evidence files, pytest protocol, journal). Prints
the totals and the per-test overhead. Usage:

    .venv/bin/python bench/isolation_overhead.py [--vendor cpu] [--select 'unit/opinfo/a*/*/*']
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from kit.patterns import select_ids


def bare_loop(vendor: str, test_ids: list[str]) -> float:
    import warnings

    from kit.pytest_plugin import build_context

    warnings.simplefilter("ignore")
    from kit.tiers.unit.cases import run_unit_case

    context = build_context(vendor, dt.date.today())
    started = time.perf_counter()
    for test_id in test_ids:
        try:
            run_unit_case(context, test_id)
        except BaseException:  # noqa: BLE001 - failures and skips count as "ran" here
            pass
    return time.perf_counter() - started


def kit_run(vendor: str, select: list[str], workers: int = 1) -> tuple[float, float, int]:
    """Wall time of ``ckit run``, time spent inside tests, tests journaled."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        command = [sys.executable, "-m", "kit", "run", "--vendor", vendor, "--tier", "unit",
                   "--workers", str(workers), "--no-sign", "--out", str(out)]
        for pattern in select:
            command += ["--select", pattern]
        started = time.perf_counter()
        subprocess.run(command, check=False, capture_output=True)
        wall = time.perf_counter() - started
        lines = (out / "journal.jsonl").read_text().splitlines()
        in_test = sum(json.loads(line)["duration_s"] for line in lines)
        return wall, in_test, len(lines)


@dataclass(frozen=True)
class Isolation:
    """One bare loop and one ``ckit run`` over the same unit tests, and the fixed cost."""

    tests: int
    journaled: int
    bare_s: float
    kit_s: float
    in_test_s: float
    #: A one-test run's wall time minus its test: interpreter, imports, collection, warm-up,
    #: report.
    fixed_s: float

    @property
    def per_test_s(self) -> float:
        """What isolation adds to each test beyond the fixed cost."""
        return (self.kit_s - self.in_test_s - self.fixed_s) / max(1, self.tests - 1)

    @property
    def ratio(self) -> float:
        return self.kit_s / self.bare_s


def measure_isolation(vendor: str, select: list[str]) -> Isolation:
    from kit.standard import load_standard

    ids = select_ids(load_standard().test_ids("unit"), select)
    bare = bare_loop(vendor, ids)
    wall, in_test, ran = kit_run(vendor, select)
    one_wall, one_in_test, _ = kit_run(vendor, [ids[0]])
    return Isolation(len(ids), ran, bare, wall, in_test, one_wall - one_in_test)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--vendor", default="cpu")
    parser.add_argument("--select", action="append", default=[])
    args = parser.parse_args()
    measured = measure_isolation(args.vendor, args.select)
    print(f"tests:                              {measured.tests} (kit journaled "
          f"{measured.journaled})")
    print(f"bare in-process loop:               {measured.bare_s:8.2f} s")
    print(f"ckit run --tier unit, wall:         {measured.kit_s:8.2f} s")
    print(f"  inside tests:                     {measured.in_test_s:8.2f} s")
    print(f"  fixed cost (1-test run minus test): {measured.fixed_s:6.2f} s")
    print(f"isolation overhead per test:        {measured.per_test_s * 1000:8.2f} ms")
    print(f"total vs bare loop:                 {measured.ratio:8.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
