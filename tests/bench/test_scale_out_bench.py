"""bench/scale_out.py runs end to end on a tiny selection and prints every figure (never judged:
the values depend on the machine)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow(seconds=150), pytest.mark.full]

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Every row of the table, in order; each carries a measured number.
FIGURES = (
    "load average at start",
    "unit tests run",
    "ckit run, 1 worker",
    "ckit run, 2 workers",
    "2 shards by test-id hash + merge, wall",
    "2 shards by durations + merge, wall",
    "shard wall times (s)",
    "shard test counts",
    "ckit merge alone",
    "verify_envelope, whole run report",
    "verify_envelope, narrowed report",
    "ckit verify, one subprocess",
    "isolation sample",
    "ckit run, per test",
    "fresh pytest per test",
    "load average at end",
)


def test_scale_out_bench_prints_every_figure(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("CKIT_SIGNING_KEY", None)
    done = subprocess.run(
        [sys.executable, "bench/scale_out.py", "--select", "unit/opinfo/add/float32/?",
         "--shards", "2", "--verify-reports", "5", "--isolation-sample", "1",
         "--keep", str(tmp_path / "runs")],
        capture_output=True, text=True, check=False, cwd=REPO_ROOT, env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = done.stdout.splitlines()
    for figure in FIGURES:
        assert any(row.strip().startswith(f"{figure}  ") for row in rows), done.stdout
    assert all(re.search(r"\d", row) for row in rows), done.stdout
    # Both balances ran two real shards (four cost two runs more and prove nothing more here),
    # each with a report, and both merged.
    for balance in ("hash", "durations"):
        merged = tmp_path / "runs" / balance / "merged" / "report.json"
        assert merged.is_file(), done.stdout
    # Every signed report verified: the throughput is over successes, never refusals.
    assert "5/5 verified" in done.stdout
    # One fresh pytest (12 s of CPU each): the path works; the figure is `make bench-scale`'s.
    assert re.search(r"isolation sample +1 ids \(kit journaled 1, fresh pytest passed 1\)",
                     done.stdout), done.stdout
