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


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--vendor", default="cpu")
    parser.add_argument("--select", action="append", default=[])
    args = parser.parse_args()

    from kit.standard import load_standard

    ids = load_standard().test_ids("unit")
    ids = select_ids(ids, args.select)
    bare = bare_loop(args.vendor, ids)
    wall, in_test, ran = kit_run(args.vendor, args.select)
    # A one-test run measures the fixed cost: interpreter, imports, collection, warm-up, report.
    one_wall, one_in_test, _ = kit_run(args.vendor, [ids[0]])
    fixed = one_wall - one_in_test
    per_test = (wall - in_test - fixed) / max(1, len(ids) - 1)
    print(f"tests:                              {len(ids)} (kit journaled {ran})")
    print(f"bare in-process loop:               {bare:8.2f} s")
    print(f"ckit run --tier unit, wall:         {wall:8.2f} s")
    print(f"  inside tests:                     {in_test:8.2f} s")
    print(f"  fixed cost (1-test run minus test): {fixed:6.2f} s")
    print(f"isolation overhead per test:        {per_test * 1000:8.2f} ms")
    print(f"total vs bare loop:                 {wall / bare:8.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
