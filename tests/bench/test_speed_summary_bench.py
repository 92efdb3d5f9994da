"""bench/speed_summary.py (``make bench``) runs end to end on a tiny selection and prints every
figure with its goal (never judged here: the values depend on the machine)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow(seconds=120), pytest.mark.full]

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Every figure the summary prints, in order.
FIGURES = (
    "(a) isolation per test",
    "(b) ckit run / bare in-process loop",
    "2 workers' speed-up over 1",
    "(d) whole-run reports verified a second",
    "(e) broken kernels / clean run (simnpu)",
)


def test_the_speed_summary_prints_every_figure_with_its_goal() -> None:
    done = subprocess.run(
        [sys.executable, "bench/speed_summary.py", "--select", "unit/opinfo/abs/float32/?",
         "--reports", "2", "--scaling-repeat", "1"],
        capture_output=True, text=True, check=False, cwd=REPO_ROOT, env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = done.stdout.splitlines()
    assert rows[0].startswith("machine: ") and "load average" in rows[0]
    figures = rows[-len(FIGURES):]
    ceiling = rows[-len(FIGURES) - 1]
    assert ceiling.startswith("two busy processes / one (this machine)"), done.stdout
    assert re.search(r" \d+\.\d\d x ", ceiling), ceiling
    for figure, row in zip(FIGURES, figures, strict=True):
        assert row.startswith(figure), done.stdout
        assert re.search(r"-?\d+\.\d\d .* goal [<>]= [\d.]+  (met|NOT met)$", row), row
