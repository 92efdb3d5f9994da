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
from pathlib import Path

# bench/ is this script's directory, hence on sys.path: the sibling module imports as a module.
from paired_runs import describe, judge_ratio, scratch, timed_cpu_run

from kit.tiers.models.segments import TRAIN

#: The issue's budget: the tier's wall time with the training steps over its time without.
GOAL_RATIO = 2.0
DEFAULT_SELECT = ["models/*/*/eager"]
TRAINING = f"models/*/*/{TRAIN}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--select", action="append", default=[])
    parser.add_argument("--keep", type=Path, help="keep both runs under this directory")
    args = parser.parse_args()
    select = args.select or DEFAULT_SELECT
    with scratch(args.keep, "ckit-training-budget-") as base:
        walls = {
            "without": timed_cpu_run(base / "without", "models", args.workers, select),
            "with": timed_cpu_run(base / "with", "models", args.workers, [*select, TRAINING]),
        }
        for name, wall in walls.items():
            describe(f"{name} training steps", base / name, wall)
        return judge_ratio(walls["with"] / walls["without"], GOAL_RATIO, "with / without",
                           f"{args.workers} worker(s)")


if __name__ == "__main__":
    raise SystemExit(main())
