"""Benchmark: what the machine's cores deliver together, the ceiling of every parallel figure.

Runs the same pure-Python loop in one process, then in as many processes at once as the machine
has CPUs, and prints the throughput of all of them against one alone. On a virtual machine two
CPUs may be two hardware threads of one core, or share it with neighbours: on the 2-CPU AMD
EPYC machine issue 26's figures come from, two busy processes delivered between 1.36x and 1.97x
one within minutes. A kit whose worker and judge overlap perfectly, or two workers, can go no
faster than that at the time. Usage:

    .venv/bin/python bench/core_scaling.py [--processes N] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

#: A loop of about a second of CPU: long against start-up, short for a benchmark.
_LOOP = "x = 0\nfor i in range(12_000_000):\n    x += i * i\n"


def _wall_of(processes: int) -> float:
    """Wall seconds until ``processes`` copies of the loop, started together, have all ended."""
    started = time.perf_counter()
    children = [subprocess.Popen([sys.executable, "-c", _LOOP]) for _ in range(processes)]
    for child in children:
        child.wait()
    return time.perf_counter() - started


def parallel_speedup(processes: int, repeat: int = 3) -> float:
    """The throughput of ``processes`` busy processes against one (the median of ``repeat``
    alternated measurements): ``processes`` on independent cores."""
    alone, together = [], []
    for _ in range(repeat):
        alone.append(_wall_of(1))
        together.append(_wall_of(processes))
    return processes * statistics.median(alone) / statistics.median(together)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    speedup = parallel_speedup(args.processes, args.repeat)
    print(f"{args.processes} busy processes deliver {speedup:.2f}x one "
          f"(independent cores: {args.processes}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
