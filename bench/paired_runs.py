"""Two timed runs of the cpu vendor, their ratio judged against a budget: the shape shared by
``bench/v2_budget.py`` (v2 over v1) and ``bench/training_budget.py`` (with training steps over
without). A run's own exit code is its grade, not the benchmark's."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from kit.report.model import Report
from kit.report.read import read_report


def timed_cpu_run(out: Path, tiers: str, workers: int, select: list[str],
                  home: Path | None = None) -> float:
    """Wall seconds of ``ckit run --vendor cpu`` (unsigned) into ``out``; ``home``: another
    kit home (``CKIT_HOME``)."""
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


def describe(label: str, out: Path, wall: float) -> Report:
    """Print the run's test count, wall time and statuses; its report."""
    report = read_report(out).report
    counted = report.summary.overall.statuses
    statuses = ", ".join(f"{status} {n}" for status, n in counted.items() if n)
    print(f"{label}: {sum(counted.values())} tests in {wall:.1f} s ({statuses})")
    return report


def judge_ratio(ratio: float, goal: float, what: str, how: str) -> int:
    """Print ``what``'s ratio against the ``goal``; 0 within it, 1 over it."""
    verdict = "within" if ratio <= goal else "OVER"
    print(f"{what} wall time: {ratio:.2f}x ({verdict} the {goal:g}x budget), {how}")
    return 0 if ratio <= goal else 1


@contextlib.contextmanager
def scratch(keep: Path | None, prefix: str) -> Iterator[Path]:
    """``keep`` (made if missing), else a temporary directory removed afterwards."""
    base = keep or Path(tempfile.mkdtemp(prefix=prefix))
    base.mkdir(parents=True, exist_ok=True)
    try:
        yield base
    finally:
        if keep is None:
            shutil.rmtree(base, ignore_errors=True)
