"""Benchmark: how much slower a run gets when a basic kernel is broken for every input.

Runs ``ckit run --vendor simnpu --tier unit --no-sign`` twice: clean, then with ``SIMNPU_FAULTS``
breaking ``add`` and ``mul`` for every input (``wrong_large``). Many tests then fail, and each
failure asks whether the worker's device is still healthy; a probe that relies on the broken
kernels, or a runner that restarts a worker per failing test, turns a half-minute run into tens
of minutes. Prints both wall times, the ratio (the goal is at most 3x), failures, and worker
starts (one ``worker-N.log`` each). The clean run is also the unit tier's wall time, held
against its goal (under 3 minutes on 2 cores) when the whole tier runs. Usage:

    .venv/bin/python bench/fault_slowdown.py [--select 'unit/opinfo/a*/*/*'] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BROKEN = '[{op: add, kind: wrong_large}, {op: mul, kind: wrong_large}]'
GOAL_RATIO = 3.0
#: The unit tier's wall-time goal on a 2-core machine, seconds.
GOAL_UNIT_TIER_S = 180.0


@dataclass(frozen=True)
class RunTiming:
    wall_s: float
    tests: int
    failures: int
    worker_starts: int


def timed_run(out: Path, faults: str | None, select: list[str]) -> RunTiming:
    """One ``ckit run`` into ``out``; the fault rules go in through the environment."""
    env = {k: v for k, v in os.environ.items() if k != "SIMNPU_FAULTS"}
    if faults:
        env["SIMNPU_FAULTS"] = faults
    command = [sys.executable, "-m", "kit", "run", "--vendor", "simnpu", "--tier", "unit",
               "--no-sign", "--out", str(out)]
    for pattern in select:
        command += ["--select", pattern]
    started = time.perf_counter()
    result = subprocess.run(command, check=False, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    journal = out / "journal.jsonl"
    if not journal.exists():
        raise SystemExit(f"ckit run wrote no journal (exit {result.returncode}):\n"
                         f"{result.stderr[-3000:]}")
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    failures = sum(r["status"] not in ("PASS", "SKIPPED", "NOT_APPLICABLE") for r in records)
    workers = len(list((out / "workers").glob("worker-*.log")))
    return RunTiming(wall, len(records), failures, workers)


def describe(label: str, timing: RunTiming) -> str:
    return (f"{label:<8} {timing.wall_s:8.1f} s  {timing.tests} tests, "
            f"{timing.failures} failed, {timing.worker_starts} worker start(s)")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--select", action="append", default=[], help="test id glob (repeatable)")
    parser.add_argument("--keep", type=Path, help="keep both output directories under DIR")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        clean = timed_run(base / "clean", None, args.select)
        print(describe("clean", clean), flush=True)
        broken = timed_run(base / "broken", BROKEN, args.select)
        print(describe("broken", broken), flush=True)
    if not args.select:
        within = "within" if clean.wall_s <= GOAL_UNIT_TIER_S else "OVER"
        print(f"unit     {clean.wall_s:.1f} s for the whole unit tier on {os.cpu_count()} CPU(s) "
              f"({within} the {GOAL_UNIT_TIER_S:g} s goal on 2 cores)")
    ratio = broken.wall_s / clean.wall_s
    verdict = "within" if ratio <= GOAL_RATIO else "OVER"
    print(f"faults   {BROKEN}")
    print(f"ratio    {ratio:.2f}x ({verdict} the {GOAL_RATIO:g}x goal)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
