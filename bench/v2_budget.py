"""Benchmark: standard v2 against v1, wall time of the whole standard on the cpu vendor.

Issue 21's budget: the whole standard v2 (v1's tests plus its variants, repeat calls, error
parity...) takes at most twice v1's wall time on 2 cores. This runs ``ckit run --vendor cpu``
on the tiers a v1 certification runs by default (unit, models, flows: v1 predates the compile
and distributed tiers; the deploy tier needs a container engine and is the same in both) under
each standard, unsigned, into a scratch
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
import shutil
from pathlib import Path

# bench/ is this script's directory, hence on sys.path: the sibling module imports as a module.
from paired_runs import describe, judge_ratio, scratch, timed_cpu_run

from kit.paths import kit_home
from kit.standard import load_standard
from kit.tiers.registry import complete_run_tiers

#: The issue's budget: v2's wall time over v1's.
GOAL_RATIO = 2.0
OLD, NEW = "v1", "v2"
#: What `ckit run` certifies by default under v1, which both standards carry.
DEFAULT_TIERS = ",".join(complete_run_tiers(load_standard(OLD)))


def v1_home(base: Path) -> Path:
    """A kit home whose only standard is v1 (and the cpu vendor's profile)."""
    source = kit_home()
    home = base / "v1-home"
    shutil.copytree(source / "standards" / OLD, home / "standards" / OLD)
    shutil.copy(source / "standards" / "released-kits.yaml", home / "standards")
    shutil.copytree(source / "vendors" / "cpu", home / "vendors" / "cpu")
    return home


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tier", default=DEFAULT_TIERS, help=f"default: {DEFAULT_TIERS}")
    parser.add_argument("--select", action="append", default=[])
    parser.add_argument("--keep", type=Path, help="keep both runs under this directory")
    args = parser.parse_args()
    with scratch(args.keep, "ckit-v2-budget-") as base:
        walls = {
            OLD: timed_cpu_run(base / OLD, args.tier, args.workers, args.select, v1_home(base)),
            NEW: timed_cpu_run(base / NEW, args.tier, args.workers, args.select),
        }
        for version, wall in walls.items():
            report = describe(version, base / version, wall)
            assert report.standard.version == version, (report.standard.version, version)
        return judge_ratio(walls[NEW] / walls[OLD], GOAL_RATIO, f"{NEW} / {OLD}",
                           f"tiers {args.tier}, {args.workers} worker(s)")


if __name__ == "__main__":
    raise SystemExit(main())
