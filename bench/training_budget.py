"""Benchmark: the model tier with and without its training steps, wall time on the cpu vendor.

Issue 23's budget: the training steps (``models/<source>/<model>/train``, standard v2) take the
model tier at most to twice its wall time without them on 2 cores. This runs ``ckit run
--vendor cpu --tier models`` twice, unsigned, into a scratch directory: once over the model
tests the patterns select (default: every model's eager forward, ``models/*/*/eager``; the
program flows have their own benchmark, ``make bench-flows``), once over the same tests plus
every training step, and prints both wall times, their test counts and the ratio against the
goal. The runs' own exit codes are their grades, not the benchmark's. Usage:

    .venv/bin/python bench/training_budget.py [--workers 2] [--select PATTERN ...] [--keep DIR]
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

from kit.report.read import read_report
from kit.tiers.models.segments import TRAIN

#: The issue's budget: the tier's wall time with the training steps over its time without.
GOAL_RATIO = 2.0
DEFAULT_SELECT = ["models/*/*/eager"]
TRAINING = f"models/*/*/{TRAIN}"


def run_models(out: Path, workers: int, select: list[str]) -> float:
    command = [sys.executable, "-m", "kit", "run", "--vendor", "cpu", "--tier", "models",
               "--workers", str(workers), "--no-sign", "--out", str(out)]
    for pattern in select:
        command += ["--select", pattern]
    started = time.monotonic()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, env=dict(os.environ))
    return time.monotonic() - started


def describe(name: str, out: Path, wall: float) -> None:
    counted = read_report(out).report.summary["overall"]["statuses"]
    statuses = ", ".join(f"{status} {n}" for status, n in counted.items() if n)
    print(f"{name}: {sum(counted.values())} tests in {wall:.1f} s ({statuses})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--select", action="append", default=[])
    parser.add_argument("--keep", type=Path, help="keep both runs under this directory")
    args = parser.parse_args()
    select = args.select or DEFAULT_SELECT
    base = args.keep or Path(tempfile.mkdtemp(prefix="ckit-training-budget-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        walls = {
            "without": run_models(base / "without", args.workers, select),
            "with": run_models(base / "with", args.workers, [*select, TRAINING]),
        }
        for name, wall in walls.items():
            describe(f"{name} training steps", base / name, wall)
        ratio = walls["with"] / walls["without"]
        verdict = "within" if ratio <= GOAL_RATIO else "OVER"
        print(f"with / without wall time: {ratio:.2f}x ({verdict} the {GOAL_RATIO:g}x budget), "
              f"{args.workers} worker(s)")
        return 0 if ratio <= GOAL_RATIO else 1
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
