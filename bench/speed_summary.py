"""Benchmark: issue 26's speed figures in one run, side by side with their goals.

(a) isolation milliseconds per test and (b) ``ckit run --tier unit`` against the bare in-process
loop doing the same work (``bench/isolation_overhead.py``), 1 against 2 workers on the same tests,
(d) whole-run reports verified per second (``bench/verify_throughput.py``), (e) a unit tier with
``add`` and ``mul`` broken for every input against a clean one on simnpu
(``bench/fault_slowdown.py``), and with ``--certify`` the cpu vendor certified on the whole
standard. The machine's CPU, load average and what two busy processes deliver against one
(``bench/core_scaling.py``: the ceiling of every figure that overlaps processes) are printed with
them: wall times on a shared machine move by a quarter between identical runs. Usage:

    .venv/bin/python bench/speed_summary.py [--select 'unit/opinfo/a*/*/*'] [--reports N]
                                            [--certify] [--scaling-repeat N]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from core_scaling import parallel_speedup
from fault_slowdown import BROKEN, timed_run
from isolation_overhead import kit_run, measure_isolation
from verify_throughput import load_average, signed_copies, verify_round_robin

from kit.verification.verify import verify_envelope

#: The row naming what the machine's cores deliver together (``bench/core_scaling.py``).
CEILING = "two busy processes / one (this machine)"


@dataclass(frozen=True)
class Figure:
    name: str
    measured: float
    unit: str
    goal: float
    #: Whether a figure at most the goal meets it (otherwise at least).
    at_most: bool

    def row(self) -> str:
        met = self.measured <= self.goal if self.at_most else self.measured >= self.goal
        bound = "<=" if self.at_most else ">="
        return (f"{self.name:<44} {self.measured:10.2f} {self.unit:<10} goal {bound} "
                f"{self.goal:g}  {'met' if met else 'NOT met'}")


def isolation_figures(select: list[str]) -> tuple[list[Figure], float]:
    """(a) and (b); also the 1-worker run's wall time, for the workers' figure."""
    measured = measure_isolation("cpu", select)
    print(f"  {measured.tests} unit tests: bare loop {measured.bare_s:.1f} s, ckit run "
          f"{measured.kit_s:.1f} s ({measured.in_test_s:.1f} s inside tests)", flush=True)
    return [Figure("(a) isolation per test", measured.per_test_s * 1000, "ms", 5.0, True),
            Figure("(b) ckit run / bare in-process loop", measured.ratio, "x", 1.3, True)
            ], measured.kit_s


def workers_figure(select: list[str], one_worker_s: float) -> Figure:
    two, _, _ = kit_run("cpu", select, workers=2)
    print(f"  1 worker {one_worker_s:.1f} s, 2 workers {two:.1f} s", flush=True)
    return Figure("2 workers' speed-up over 1", one_worker_s / two, "x", 1.6, False)


def verify_figure(reports: int, root: Path) -> Figure:
    envelopes, keyring = signed_copies(root / "verify", 4)
    verify_envelope(envelopes[0], keyring_dir=keyring)  # imports and first loads, untimed
    wall, _ = verify_round_robin(envelopes, keyring, reports)
    return Figure("(d) whole-run reports verified a second", reports / wall, "/s", 100.0, False)


def broken_kernel_figure(select: list[str], root: Path) -> Figure:
    clean = timed_run(root / "clean", None, select)
    broken = timed_run(root / "broken", BROKEN, select)
    print(f"  simnpu clean {clean.wall_s:.1f} s, add and mul broken {broken.wall_s:.1f} s "
          f"({broken.failures} failed)", flush=True)
    return Figure("(e) broken kernels / clean run (simnpu)", broken.wall_s / clean.wall_s, "x",
                  3.0, True)


def certify_seconds(root: Path) -> float:
    """``ckit run --vendor cpu`` as ``make certify`` runs it (the default tiers), unsigned."""
    command = [sys.executable, "-m", "kit", "run", "--vendor", "cpu", "--no-sign",
               "--out", str(root / "certify")]
    started = time.monotonic()
    subprocess.run(command, check=False, capture_output=True)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--select", action="append", default=[], metavar="PATTERN",
                        help="narrow the unit tier (default: all of it)")
    parser.add_argument("--reports", type=int, default=20, metavar="N",
                        help="whole-run reports to verify")
    parser.add_argument("--scaling-repeat", type=int, default=3, metavar="N",
                        help="alternated measurements of the cores' ceiling (their median)")
    parser.add_argument("--certify", action="store_true",
                        help="also time the cpu vendor on the whole standard")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPU(s), {platform.processor() or platform.machine()}, "
          f"load average {load_average()}", flush=True)
    ceiling = parallel_speedup(2, args.scaling_repeat)
    print(f"  two busy processes deliver {ceiling:.2f}x one", flush=True)
    with tempfile.TemporaryDirectory(prefix="ckit-speed-") as temp:
        root = Path(temp)
        figures, one_worker_s = isolation_figures(args.select)
        figures.append(workers_figure(args.select, one_worker_s))
        figures.append(verify_figure(args.reports, root))
        figures.append(broken_kernel_figure(args.select, root))
        certify = certify_seconds(root) if args.certify else None
    print(f"load average at the end: {load_average()}")
    print(f"{CEILING:<44} {ceiling:10.2f} x          the ceiling of any overlap")
    for figure in figures:
        print(figure.row())
    if certify is not None:
        print(f"{'cpu vendor, whole standard (ckit run)':<44} {certify:10.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
