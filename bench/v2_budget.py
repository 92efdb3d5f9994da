"""Benchmark: standard v2 against v1, wall time of the whole standard on the cpu vendor.

Issue 21's budget: the whole standard v2 (v1's tests plus its variants, repeat calls, error
parity...) takes at most twice v1's wall time on 2 cores. This runs ``ckit run --vendor cpu``
on the tiers a certification runs by default (unit, models, flows; the deploy tier needs a
container engine and is the same in both) under each standard, unsigned, into a scratch
directory: v2 from this checkout, v1 from a scratch kit home holding v1 alone (so v1 is the
current standard, judged exactly as a v1 run is), and prints both wall times, their test counts
and the ratio against the goal. The runs' own exit codes are their grades, not the
benchmark's. Usage:

    .venv/bin/python bench/v2_budget.py [--workers 2] [--tier T,...] [--select PATTERN ...]
                                        [--keep DIR]

``--tier unit`` times the unit tier alone (about 3 minutes on 2 cores, v1 and v2);
``--select 'unit/opinfo/add/*/*'`` narrows both runs to the same patterns (v2's ids under them
include its variants).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kit.paths import kit_home
from kit.report.read import read_report
from kit.tiers.registry import complete_run_tiers

#: The issue's budget: v2's wall time over v1's.
GOAL_RATIO = 2.0
OLD, NEW = "v1", "v2"
#: What `ckit run` certifies by default (the deploy tier needs a container engine).
DEFAULT_TIERS = ",".join(complete_run_tiers())


def v1_home(base: Path) -> Path:
    """A kit home whose only standard is v1 (and the cpu vendor's profile)."""
    source = kit_home()
    home = base / "v1-home"
    shutil.copytree(source / "standards" / OLD, home / "standards" / OLD)
    shutil.copy(source / "standards" / "released-kits.yaml", home / "standards")
    shutil.copytree(source / "vendors" / "cpu", home / "vendors" / "cpu")
    return home


def run_standard(
    out: Path, tiers: str, workers: int, select: list[str], home: Path | None
) -> float:
    command = [sys.executable, "-m", "kit", "run", "--vendor", "cpu", "--tier", tiers,
               "--workers", str(workers), "--no-sign", "--out", str(out)]
    for pattern in select:
        command += ["--select", pattern]
    env = dict(os.environ)
    if home is not None:
        env["CKIT_HOME"] = str(home)
    started = time.monotonic()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, env=env)
    return time.monotonic() - started


def describe(version: str, out: Path, wall: float) -> None:
    report = read_report(out).report
    assert report.standard.version == version, (report.standard.version, version)
    counted = report.summary["overall"]["statuses"]
    statuses = ", ".join(f"{status} {n}" for status, n in counted.items() if n)
    print(f"{version}: {sum(counted.values())} tests in {wall:.1f} s ({statuses})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tier", default=DEFAULT_TIERS, help=f"default: {DEFAULT_TIERS}")
    parser.add_argument("--select", action="append", default=[])
    parser.add_argument("--keep", type=Path, help="keep both runs under this directory")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="ckit-v2-budget-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        walls = {
            OLD: run_standard(base / OLD, args.tier, args.workers, args.select, v1_home(base)),
            NEW: run_standard(base / NEW, args.tier, args.workers, args.select, None),
        }
        for version, wall in walls.items():
            describe(version, base / version, wall)
        ratio = walls[NEW] / walls[OLD]
        verdict = "within" if ratio <= GOAL_RATIO else "OVER"
        print(f"v2 / v1 wall time: {ratio:.2f}x ({verdict} the {GOAL_RATIO:g}x budget), "
              f"tiers {args.tier}, {args.workers} worker(s)")
        return 0 if ratio <= GOAL_RATIO else 1
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
