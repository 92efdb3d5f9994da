"""Benchmark: the whole flows tier on the reference backends, on this machine's cores.

Issue 9's target: ``ckit run --vendor cpu --flows executorch_xnnpack,executorch_xnnpack_int8,
onnxruntime_cpu`` finishes on 2 cores within CI's 90 minutes. This runs the flows tier (or the
tests ``--select`` names) through those flows into a scratch directory, unsigned, and prints the
wall time against the goal and each flow's stage counts and delegation figures from the
report's typed read model. The run's own exit code is its grade: findings of the real backends
(NOT_DELEGATED, CRASH, FAIL_NUMERIC) are expected and printed, not a failure of the benchmark.
Usage:

    .venv/bin/python bench/flows_tier.py [--workers 2] [--select PATTERN] [--keep DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kit.report.model import Report
from kit.report.read import read_report

FLOWS = "executorch_xnnpack,executorch_xnnpack_int8,onnxruntime_cpu"
GOAL_S = 90 * 60


def run_tier(out: Path, workers: int, select: list[str]) -> float:
    command = [sys.executable, "-m", "kit", "run", "--vendor", "cpu", "--tier", "flows",
               "--flows", FLOWS, "--workers", str(workers), "--no-sign", "--out", str(out)]
    for pattern in select:
        command += ["--select", pattern]
    started = time.monotonic()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def print_flows(report: Report) -> None:
    for totals in report.flows.values():
        stages = ", ".join(f"{stage} {count}" for stage, count in sorted(totals.stages.items()))
        top = ", ".join(f"{op} {count}" for op, count in totals.top_undelegated[:3])
        print(f"{totals.flow}: {totals.total} tests ({stages}); delegated ops "
              f"{totals.delegated_ops}, left out {totals.undelegated_ops} ({top}); lowering "
              f"{totals.lowering_s:.0f} s; programs {totals.program_bytes} bytes")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--select", action="append", default=[])
    parser.add_argument("--keep", type=Path, help="write the run here (new or empty) and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ckit-bench-flows-") as scratch:
        out = args.keep or Path(scratch) / "run"
        seconds = run_tier(out, args.workers, args.select)
        report = read_report(out).report
        print(f"flows tier: {seconds / 60:.1f} min with {args.workers} workers "
              f"(goal: under {GOAL_S // 60} min): {'met' if seconds < GOAL_S else 'MISSED'}")
        print_flows(report)
    return 0 if seconds < GOAL_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
